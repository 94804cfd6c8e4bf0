import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { nodeBinary, SHIPPED_NODE_MAJOR } from './node-binary';

/*
 * `npm run bench` and `npm run bench:tracing`: the named script of dist-bench/bench (run.js,
 * tracing-cost.js), its arguments passed on, on the Node the image ships, whatever Node npm runs
 * on: the load, the servers and the worker then all run on it, as in production.
 */
const [script, ...args] = process.argv.slice(2);
if (!script) throw new Error('usage: on-shipped-node.js <script of dist-bench/bench> [arguments]');
const node = nodeBinary(SHIPPED_NODE_MAJOR);
const run = spawnSync(node, [join(__dirname, script), ...args], { stdio: 'inherit' });
process.exit(run.status ?? 1);

import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findFreePort } from '../src/dev/free-port';
import { nodeBinary, SHIPPED_NODE_MAJOR, versionOf } from './node-binary';
import { shippedNodeFlags } from '../test/support/node-flags';
import { ROOT, type ServerName, secret, smoke } from './run-settings';

/*
 * The servers compared: started as production starts the service, stopped, their memory.
 */

export interface RunningServer {
  name: ServerName;
  child: ChildProcess;
  port: number;
  /** Its METRICS_PORT, when it serves metrics (the 'metrics' server). */
  metricsPort?: number;
  startupMs: number;
}

// The service and the naive variant start as production starts the service: the node flags of
// `npm run start:prod` (package.json's config.serverNodeFlags), without npm in between; the bare
// server with Node's defaults. BENCH_NODE_FLAGS replaces the service's flags (to compare heap
// settings: docs/benchmarks.md, "Node flags"); the report says which ran.
export const SERVICE_NODE_FLAGS =
  process.env.BENCH_NODE_FLAGS?.split(/\s+/).filter(Boolean) ?? shippedNodeFlags('server', ROOT);
export const SERVERS: ServerName[] = ['service', 'bare', 'naive'];
// The service again with METRICS_PORT set, measured on the workloads that say so (e and z, where
// a fixed cost per request shows most) against the service without it, to price the metrics.
export const WITH_METRICS: ServerName[] = [...SERVERS, 'metrics'];
// The service and the bare server on the older supported Node (the machine's, or the registry's),
// on the workloads that say so: the run shows whether the Node that ships is slower on any of them.
export const OLDER_NODE_MAJOR = 20;
export const ON_OLDER_NODE: ServerName[] = ['service-older-node', 'bare-older-node'];
// Express alone and NestJS alone (the probe of (z), and the bare handler behind their routing):
// the framework's own floor.
export const FRAMEWORK_ALONE: ServerName[] = ['express-alone', 'nest-alone'];
export const STARTED: ServerName[] = [...WITH_METRICS, ...ON_OLDER_NODE, ...FRAMEWORK_ALONE];
// Per workload, the service and the bare server twice, in mirrored order, so that the machine's
// drift during a workload weighs on both alike (the service with metrics likewise beside the
// service, and the older Node's pair in the middle); the naive one once, in the middle. A smoke
// run only checks that everything runs: each server once.
export const ORDER: ServerName[] = smoke
  ? STARTED
  : [
      'service',
      'metrics',
      'bare',
      'service-older-node',
      'express-alone',
      'naive',
      'nest-alone',
      'bare-older-node',
      'bare',
      'metrics',
      'service',
    ];
const SERVICE = join(ROOT, 'dist', 'main.js');
const BARE = join(__dirname, 'bare-server.js');
const FRAMEWORKS = join(__dirname, 'framework-servers.js');
const COMMAND: Record<ServerName, { major: number; args: string[] }> = {
  service: { major: SHIPPED_NODE_MAJOR, args: [...SERVICE_NODE_FLAGS, SERVICE] },
  metrics: { major: SHIPPED_NODE_MAJOR, args: [...SERVICE_NODE_FLAGS, SERVICE] },
  bare: { major: SHIPPED_NODE_MAJOR, args: [BARE] },
  naive: {
    major: SHIPPED_NODE_MAJOR,
    args: [...SERVICE_NODE_FLAGS, join(__dirname, 'naive-server.js')],
  },
  'service-older-node': { major: OLDER_NODE_MAJOR, args: [...SERVICE_NODE_FLAGS, SERVICE] },
  'bare-older-node': { major: OLDER_NODE_MAJOR, args: [BARE] },
  // With the service's flags: they differ from it in code only.
  'express-alone': { major: SHIPPED_NODE_MAJOR, args: [...SERVICE_NODE_FLAGS, FRAMEWORKS] },
  'nest-alone': { major: SHIPPED_NODE_MAJOR, args: [...SERVICE_NODE_FLAGS, FRAMEWORKS] },
};

/** The Node version each server runs on, for the report. */
export function nodeVersions(): Record<'shipped' | 'older', string> {
  return {
    shipped: versionOf(nodeBinary(SHIPPED_NODE_MAJOR)),
    older: versionOf(nodeBinary(OLDER_NODE_MAJOR)),
  };
}

export async function startServer(
  name: ServerName,
  databaseUrl: string,
  env: Record<string, string> = {},
): Promise<RunningServer> {
  const port = await findFreePort();
  const metricsPort = name === 'metrics' ? await findFreePort() : undefined;
  const errors = openSync(join(tmpdir(), `bench-${name}.err.log`), 'w');
  const started = performance.now();
  const { major, args } = COMMAND[name];
  const child = spawn(nodeBinary(major), args, {
    cwd: ROOT,
    // Production settings; the rate limit is raised so that the load is not refused, and the
    // request log (one JSON line per request, as in production) goes to /dev/null.
    env: {
      PATH: process.env.PATH,
      NODE_ENV: 'production',
      DATABASE_URL: databaseUrl,
      API_KEY_SECRET: secret,
      PORT: String(port),
      RATE_LIMIT_PER_MINUTE: '1000000000',
      LOG_LEVEL: 'info',
      ...(metricsPort && { METRICS_PORT: String(metricsPort) }),
      ...(name === 'express-alone' && { FRAMEWORK: 'express' }),
      ...env,
    },
    stdio: ['ignore', openSync('/dev/null', 'w'), errors],
  });
  const ready = '/health/ready';
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`${name} exited; see ${tmpdir()}/bench-${name}.err.log`);
    const status = await fetch(`http://127.0.0.1:${port}${ready}`).then(
      (response) => response.status,
      () => 0,
    );
    if (status === 200) break;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  if (metricsPort && (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).status !== 200) {
    throw new Error(`${name} does not serve /metrics on METRICS_PORT`);
  }
  return { name, child, port, metricsPort, startupMs: performance.now() - started };
}

export async function stopServer({ child }: RunningServer): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

export function residentMb(pid: number | undefined): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}

import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findFreePort } from '../src/dev/free-port';
import { type ServerName } from './report';
import { ROOT, secret, smoke } from './run-settings';

/*
 * The servers compared: started as production starts the service, stopped, their memory.
 */

export interface RunningServer {
  name: ServerName;
  child: ChildProcess;
  port: number;
  startupMs: number;
}

// The service and the naive variant start as production starts the service: `npm run start:prod`'s
// node flags (heap bounds), without npm in between.
const PRODUCTION_FLAGS = productionNodeFlags();
export const SERVERS: ServerName[] = ['service', 'bare', 'naive'];
// The service again with METRICS_PORT set, measured on the workloads that say so (e and z, where
// a fixed cost per request shows most) against the service without it, to price the metrics.
export const WITH_METRICS: ServerName[] = [...SERVERS, 'metrics'];
export const STARTED = WITH_METRICS;
// Per workload, the service and the bare server twice, in mirrored order, so that the machine's
// drift during a workload weighs on both alike (the service with metrics likewise beside the
// service); the naive one once, in the middle. A smoke run only checks that everything runs: each
// server once.
export const ORDER: ServerName[] = smoke
  ? STARTED
  : ['service', 'metrics', 'bare', 'naive', 'bare', 'metrics', 'service'];
const COMMAND: Record<ServerName, string[]> = {
  service: [...PRODUCTION_FLAGS, join(ROOT, 'dist', 'main.js')],
  metrics: [...PRODUCTION_FLAGS, join(ROOT, 'dist', 'main.js')],
  bare: [join(__dirname, 'bare-server.js')],
  naive: [...PRODUCTION_FLAGS, join(__dirname, 'naive-server.js')],
};

function productionNodeFlags(): string[] {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const [exec, node, ...rest] = manifest.scripts['start:prod'].split(/\s+/);
  if (exec !== 'exec' || node !== 'node' || rest.at(-1) !== 'dist/main.js') {
    throw new Error('start:prod is expected to be `exec node [flags] dist/main.js`');
  }
  const flags = rest.slice(0, -1);
  // BENCH_OLD_SPACE_MB: another old-space size for the service than start:prod's (to compare heap
  // settings, as docs/benchmarks.md's "Tracing" does).
  const oldSpace = process.env.BENCH_OLD_SPACE_MB;
  return oldSpace === undefined
    ? flags
    : flags.map((flag) =>
        flag.startsWith('--max-old-space-size=') ? `--max-old-space-size=${oldSpace}` : flag,
      );
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
  const child = spawn(process.execPath, COMMAND[name], {
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
  return { name, child, port, startupMs: performance.now() - started };
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

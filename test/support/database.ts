import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { until } from './until';

/**
 * Each test file gets a database of its own, cloned from the template that global-setup migrated
 * once (`CREATE DATABASE ... TEMPLATE ...` takes milliseconds), so files run in parallel without
 * seeing each other's rows.
 */
export interface TestDatabase {
  url: string;
  /** The same database without the run's pooler: for a session of a test's own (see below). */
  directUrl: string;
  drop(): Promise<void>;
}

/** The server URL set by global-setup: embedded PostgreSQL, or the DATABASE_URL given to the run. */
function serverUrl(): string {
  const url = process.env.TEST_SERVER_URL;
  if (!url)
    throw new Error('TEST_SERVER_URL is not set: run the tests through jest (global-setup).');
  return url;
}

/**
 * The same server without a pooler in between (DATABASE_MIGRATION_URL given to the run, as
 * .ci/pgbouncer-suite does), for what needs a session of its own: the migrations (a session
 * advisory lock), and creating and dropping databases (a template must have no connection, and
 * PgBouncer keeps its server connections open). The server URL when none was given.
 */
function directServerUrl(): string {
  return process.env.TEST_DIRECT_SERVER_URL || serverUrl();
}

/** A database's URL, through the pooler when the run has one (what the service uses). */
export function databaseUrl(name: string): string {
  return withDatabase(serverUrl(), name);
}

/** A database's URL on a direct connection to the server (see directServerUrl). */
export function directDatabaseUrl(name: string): string {
  return withDatabase(directServerUrl(), name);
}

function withDatabase(server: string, name: string): string {
  const url = new URL(server);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function withServer<T>(run: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: directServerUrl() });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/**
 * The database goes away (no new connection, the open ones ended: theirs too, so a client of the
 * caller's needs an `error` listener) or comes back.
 */
export async function allowConnections(database: TestDatabase, allowed: boolean): Promise<void> {
  const name = decodeURIComponent(new URL(database.directUrl).pathname.slice(1));
  await withServer(async (client) => {
    await client.query(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS ${allowed}`);
    if (!allowed) {
      await client.query(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1',
        [name],
      );
    }
  });
}

/** A new database: migrated (a clone of the template) by default, or empty. */
export async function createTestDatabase(
  options: { migrated?: boolean } = {},
): Promise<TestDatabase> {
  const name = `test_${process.env.TEST_RUN_ID}_${randomBytes(6).toString('hex')}`;
  const template = options.migrated === false ? 'template0' : process.env.TEST_TEMPLATE_DATABASE;
  if (!template) throw new Error('TEST_TEMPLATE_DATABASE is not set: run the tests through jest.');
  await withServer((client) => client.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`));
  return {
    url: databaseUrl(name),
    directUrl: directDatabaseUrl(name),
    drop: () =>
      withServer((client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)).then(
        () => undefined,
      ),
  };
}

/**
 * How many statements of the client's database wait on a lock. The client is typically the locker,
 * inside the transaction that holds the lock, and PostgreSQL keeps the list of sessions that
 * pg_stat_activity shows for the rest of a transaction once read: a session that connected since
 * (PgBouncer opens its server connections when the requests come) would never be seen waiting.
 * pg_stat_clear_snapshot() makes every count a fresh read.
 */
export async function lockWaiterCount(client: Client): Promise<number> {
  const { rows } = await client.query<{ waiting: number }>(
    `SELECT count(*)::int AS waiting FROM pg_stat_clear_snapshot(), pg_stat_activity
      WHERE wait_event_type = 'Lock' AND datname = current_database()`,
  );
  return rows[0].waiting;
}

/**
 * Resolves once `count` queries of the locker's database wait on a lock (one the locker holds), so
 * that a test knows its requests are inside the server, stuck; bounded, to fail rather than hang.
 */
export async function waitForLockWaiter(locker: Client, count = 1): Promise<void> {
  // Patient: the waiter may be a process still starting on a busy machine (seconds, not ms).
  await until(
    `${count === 1 ? 'a query' : `${count} queries`} to wait on the lock`,
    async () => (await lockWaiterCount(locker)) >= count,
  );
}

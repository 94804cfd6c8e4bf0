import type { PoolConfig } from 'pg';

/*
 * How long a request may wait for the database, and how many may wait at once (README, "When the
 * database fails"; docs/api.md, 503).
 *
 * - POOL_SIZE connections per pool for the workspaces' statements (node-postgres's default,
 *   stated): PostgreSQL serves a few connections per core best, and every instance of the service
 *   has its own pools. Those statements wait for one in the fair queue (fair-queue.ts, database.ts),
 *   which hands out at most POOL_SIZE at once and bounds their wait by QUEUE_DEADLINE_MS; the pool's
 *   own FIFO queue then holds only the unattributed statements (the key lookups, the readiness ping)
 *   and, for a moment, a statement that the fair queue admitted while those held a connection.
 * - CONNECTION_WAIT_MS: the longest a statement waits in a pool's queue for a connection, whether
 *   behind the busy ones or opening a new one. A key lookup takes well under a millisecond, and a
 *   new connection opens in a few ms on a local network: a statement that still has none after a
 *   second is behind a database that is stuck, and waiting longer only holds the client.
 * - MAX_WAITING statements may wait in a pool's queue at once; the next one is refused at once. Key
 *   lookups of under a millisecond on PRIORITY_CONNECTIONS or more drain 1,000 in a fraction of
 *   CONNECTION_WAIT_MS; the bound keeps memory and timers bounded under a flood. (It was 100 when
 *   the pool's queue was also the list statements' one: a burst of one workspace's key lookups then
 *   filled it, and another workspace's key lookup was refused with 503.)
 * - STATEMENT_TIMEOUT_MS: the longest a statement runs (the slowest serving statement, a deep page
 *   of a million-company workspace under load, takes about 300 ms).
 */
export const POOL_SIZE = 10;
/**
 * Connections of each pool beyond POOL_SIZE: the serving statements of workspaces take at most
 * POOL_SIZE at once (the fair queue's seats, database.ts), so these are always there for what every
 * request needs before it is attributed to a workspace: the key lookup and its lastUsedAt write, and
 * the readiness ping. A key check never waits behind list statements.
 */
export const PRIORITY_CONNECTIONS = 2;
export const CONNECTION_WAIT_MS = 1_000;
export const MAX_WAITING = 1_000;
export const STATEMENT_TIMEOUT_MS = 5_000;

/**
 * The session settings the service's statements rely on:
 * - TimeZone: the adapter sends and reads timestamps without an offset; in a session whose zone is
 *   not UTC, every instant would be shifted by it.
 * - extra_float_digits: PostgreSQL writes the lists' JSON, and scores must come out exactly as
 *   stored (1 is the shortest exact form; a server set to 0 would round them).
 * - jit: compiling a plan costs tens of milliseconds, more than any of these queries runs.
 * - statement_timeout: STATEMENT_TIMEOUT_MS.
 */
export const SESSION_SETTINGS = {
  TimeZone: 'UTC',
  extra_float_digits: '1',
  jit: 'off',
  statement_timeout: String(STATEMENT_TIMEOUT_MS),
};

/**
 * How the settings reach each connection: `startup` sends them when it connects (a direct
 * connection); `role` sends nothing, for PgBouncer in transaction mode, which refuses startup
 * parameters it does not know (options, statement_timeout), and hands each transaction whatever
 * server connection is free, so a SET would not follow the client either. The database role then
 * carries them (`ALTER ROLE ... SET`, docs/scaling.md): PostgreSQL applies them at every login of
 * the pooler's server connections, so every transaction gets them, whichever connection it is on.
 */
export type SessionSettingsSource = 'startup' | 'role';

/** Where the settings come from for a DATABASE_POOLER value: the role behind PgBouncer. */
export function sessionSettingsSource(pooler: string | undefined): SessionSettingsSource {
  return pooler === 'pgbouncer' ? 'role' : 'startup';
}

/**
 * SESSION_SETTINGS but the statement timeout, as the `options` startup parameter. The webhook
 * worker's pool sends these too: it writes the items of its events, which must read as the API's
 * do; its statements (pg-boss's own bookkeeping among them) are not the serving path's to time out.
 */
export function startupOptions(): string {
  return Object.entries(SESSION_SETTINGS)
    .filter(([name]) => name !== 'statement_timeout')
    .map(([name, value]) => `-c ${name}=${value}`)
    .join(' ');
}

/**
 * The pool's settings. The benchmark's bare server uses them too, to be configured alike; this file
 * imports nothing else, so that it does not load Nest or Prisma there.
 */
export function poolConfig(
  connectionString: string,
  settings: SessionSettingsSource = 'startup',
): PoolConfig {
  return {
    connectionString,
    max: POOL_SIZE + PRIORITY_CONNECTIONS,
    // Bounded waits, so that a database that is down, stuck or overloaded gives a 503 within a
    // second or a few rather than requests that hang (the queue's bound is Database's).
    connectionTimeoutMillis: CONNECTION_WAIT_MS,
    ...(settings === 'startup' && {
      statement_timeout: STATEMENT_TIMEOUT_MS,
      options: startupOptions(),
    }),
  };
}

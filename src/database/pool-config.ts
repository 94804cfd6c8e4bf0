import type { PoolConfig } from 'pg';

/*
 * How long a request may wait for the database, and how many may wait at once (README, "When the
 * database fails"; docs/api.md, 503).
 *
 * - POOL_SIZE connections per process (node-postgres's default, stated): PostgreSQL serves a few
 *   connections per core best, and every instance of the service has its own pool.
 * - CONNECTION_WAIT_MS: the longest a statement waits for a connection, whether queued behind the
 *   busy ones or opening a new one. Under load a statement holds its connection 10 to 60 ms at the
 *   median and about 100 ms at the 99th percentile (docs/benchmarks.md, workloads (a) to (f)), and a
 *   new connection opens in a few ms on a local network: a statement that still has none after a
 *   second is behind a database that is stuck or overloaded, and waiting longer (it was 5 s) only
 *   holds the client, which will retry anyway, and piles more work behind the stuck one. Shedding
 *   it with a 503 and `Retry-After` after a second keeps the answers coming.
 * - MAX_WAITING statements may wait at once; the next one is refused at once, without waiting.
 *   A full queue drains in CONNECTION_WAIT_MS when statements take up to 100 ms
 *   (POOL_SIZE × 1000 / 100 = 100 waiters): a statement queued behind more would most likely time
 *   out anyway, so it is better refused now than after a second of waiting. The queue is also what
 *   bounds memory and timers under a flood (1,000 concurrent requests once queued 990 waiters).
 * - STATEMENT_TIMEOUT_MS: the longest a statement runs (the slowest serving statement, a deep page
 *   of a million-company workspace under load, takes about 300 ms).
 */
export const POOL_SIZE = 10;
export const CONNECTION_WAIT_MS = 1_000;
export const MAX_WAITING = 100;
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
    max: POOL_SIZE,
    // Bounded waits, so that a database that is down, stuck or overloaded gives a 503 within a
    // second or a few rather than requests that hang (the queue's bound is Database's).
    connectionTimeoutMillis: CONNECTION_WAIT_MS,
    ...(settings === 'startup' && {
      statement_timeout: STATEMENT_TIMEOUT_MS,
      options: startupOptions(),
    }),
  };
}

import type { ClientBase, Pool, PoolConfig } from 'pg';

/*
 * How long a request may wait for the database, and how many may wait at once (docs/operations.md, "When the
 * database fails"; docs/api.md, 503).
 *
 * - POOL_SIZE connections in the pool of the workspaces' statements (node-postgres's default,
 *   stated): PostgreSQL serves a few connections per core best, and every instance of the service
 *   has its own pools. Those statements wait for one in the fair queue (fair-queue.ts, database.ts),
 *   which hands out exactly POOL_SIZE seats, one per connection, and bounds their wait by
 *   QUEUE_DEADLINE_MS; a statement holding a seat never waits in the pool's own queue.
 * - PRIORITY_CONNECTIONS in a pool of their own for what every request needs before it is
 *   attributed to a workspace (the key lookup, its lastUsedAt write) and the readiness ping: they
 *   never wait behind the workspaces' statements, nor these behind them.
 * - CONNECTION_WAIT_MS: the longest a statement waits in a pool's queue for a connection, whether
 *   behind the busy ones or opening a new one. A key lookup takes well under a millisecond, and a
 *   new connection opens in a few ms on a local network: a statement that still has none after a
 *   second is behind a database that is stuck, and waiting longer only holds the client.
 * - MAX_WAITING statements may wait in a pool's queue at once; the next one is refused at once. Key
 *   lookups of under a millisecond on PRIORITY_CONNECTIONS drain 1,000 in a fraction of
 *   CONNECTION_WAIT_MS; the bound keeps memory and timers bounded under a flood.
 * - STATEMENT_TIMEOUT_MS: the longest a statement runs (the slowest serving statement, a deep page
 *   of a million-company workspace under load, takes about 300 ms).
 */
export const POOL_SIZE = 10;
/** The connections of the key lookups and the readiness ping (see above). */
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

/*
 * PostgreSQL's backends allocate with malloc, and glibc's malloc (Debian's, Ubuntu's, the official
 * images' PostgreSQL) hands the free memory at the top of its heap back to the kernel once more
 * than its trim threshold is free: 128 KiB at first, raised only when the backend frees a block it
 * had mapped on its own (above the mmap threshold, 128 KiB at first), to twice that block's size. A
 * backend that never freed such a block gives back, at the end of each list statement, the memory
 * the statement took, and takes it again at the next one in page faults: on workload (f)
 * (docs/benchmarks.md, "The database's allocator"), 8 of the 10 read connections took about 170
 * page faults a statement and the database 13 % more CPU a page than under the bare server. So each
 * new connection first runs one statement that makes and frees a block of ALLOCATOR_WARMUP_BYTES:
 * its backend then keeps up to twice that free, and the faults went (docs/scaling.md, "PostgreSQL's
 * memory allocator"). Elsewhere (another allocator) it costs one statement of under a millisecond.
 */
/** The block the first statement of each connection makes and frees (see above). */
const ALLOCATOR_WARMUP_BYTES = 1024 * 1024;
export const ALLOCATOR_WARMUP_SQL = `SELECT length(repeat(' ', ${ALLOCATOR_WARMUP_BYTES}))`;

/**
 * Queued on a new connection before the pool hands it out, so it runs before any statement of the
 * service's. A failure is not reported: it would be the next statement's failure too (a broken
 * connection), and that one is answered.
 */
function warmAllocator(client: ClientBase): void {
  client.query(ALLOCATOR_WARMUP_SQL).catch(ignore);
}

/**
 * A pool's settings, for `size` connections. The benchmark's bare server uses them too, to be
 * configured alike; this file imports nothing else, so that it does not load Nest or Prisma there.
 */
export function poolConfig(
  connectionString: string,
  settings: SessionSettingsSource = 'startup',
  size = POOL_SIZE,
): PoolConfig {
  return {
    connectionString,
    max: size,
    // A fixed size: idle connections stay open (node-postgres closes them after 10 s idle by
    // default), so that a burst after a quiet spell does not wait for new ones (a backend started,
    // the login, the settings) in the very statements by which the fair queue measures the burst's
    // workspaces (fair-queue.ts). Database.openConnections opens them before the server listens.
    min: size,
    // Bounded waits, so that a database that is down, stuck or overloaded gives a 503 within a
    // second or a few rather than requests that hang (the queue's bound is Database's).
    connectionTimeoutMillis: CONNECTION_WAIT_MS,
    onConnect: warmAllocator,
    ...(settings === 'startup' && {
      statement_timeout: STATEMENT_TIMEOUT_MS,
      options: startupOptions(),
    }),
  };
}

const ignore = () => undefined;

/**
 * The error events of a pool's connections, which with no listener end the process. One that dies
 * while idle (a restart, an administrator's terminate) is dropped by the pool and passed to
 * `report`. One that dies while checked out (between two statements of a transaction) emits on its
 * client; the statement under way, or the next, fails with the same error, which its caller
 * handles, so the event itself is ignored.
 */
export function handleConnectionErrors(pool: Pool, report: (error: Error) => void): void {
  pool.on('error', report);
  pool.on('connect', (client) => client.on('error', ignore));
}

import type { PoolConfig } from 'pg';

/**
 * The pool's settings. The benchmark's bare server uses them too, to be configured alike; this file
 * imports nothing else, so that it does not load Nest or Prisma there.
 */
export function poolConfig(connectionString: string): PoolConfig {
  return {
    connectionString,
    // Bounded waits, so that a database that is down or stuck gives a 503 in seconds rather
    // than requests that hang.
    connectionTimeoutMillis: 5_000,
    statement_timeout: 5_000,
    // - TimeZone: the adapter sends and reads timestamps without an offset; in a session whose
    //   zone is not UTC, every instant would be shifted by it.
    // - extra_float_digits: PostgreSQL writes the lists' JSON, and scores must come out exactly
    //   as stored (1 is the shortest exact form; a server set to 0 would round them).
    // - jit: compiling a plan costs tens of milliseconds, more than any of these queries runs.
    options: '-c TimeZone=UTC -c extra_float_digits=1 -c jit=off',
  };
}

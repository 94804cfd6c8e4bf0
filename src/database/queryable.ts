import type { Pool, QueryResultRow } from 'pg';
import { inStatementSpan } from './statement-spans';

/** What the serving path needs of the database: one statement, its rows. */
export interface Queryable {
  query<T extends QueryResultRow>(sql: string, values: unknown[]): Promise<T[]>;
}

/**
 * A statement refused at once because MAX_WAITING statements already wait for a connection: the
 * pool is saturated (database-errors.ts maps it to a 503 with `Retry-After: 1`).
 */
export class PoolSaturatedError extends Error {
  readonly code = 'POOL_SATURATED';

  constructor(waiting: number) {
    super(`pool saturated: ${waiting} statements already wait for a connection`);
    this.name = 'PoolSaturatedError';
  }
}

/**
 * One statement on a pool; values are bound parameters, never spliced into the text. Refused at
 * once when maxWaiting statements already wait, and after CONNECTION_WAIT_MS without a connection
 * (pool-config.ts). In a traced request, a span of its own (statement-spans.ts), which covers its
 * wait for a connection of the pool too.
 */
export async function queryPool<T extends QueryResultRow>(
  pool: Pool,
  maxWaiting: number,
  sql: string,
  values: unknown[],
): Promise<T[]> {
  if (pool.waitingCount >= maxWaiting) throw new PoolSaturatedError(pool.waitingCount);
  const { rows } = await inStatementSpan(pool, sql, () => pool.query<T>(sql, values));
  return rows;
}

import { Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { Pool, type QueryResultRow } from 'pg';
import { Environment } from '../config/environment';
import { MAX_WAITING, poolConfig } from './pool-config';

/** What the serving path needs of the database: one statement, its rows. */
export interface Queryable {
  query<T extends QueryResultRow>(sql: string, values: unknown[]): Promise<T[]>;
}

/**
 * A statement refused at once because MAX_WAITING statements already wait for a connection: the
 * pool is saturated (src/http/database-errors.ts maps it to a 503 with `Retry-After: 1`).
 */
export class PoolSaturatedError extends Error {
  readonly code = 'POOL_SATURATED';

  constructor(waiting: number) {
    super(`pool saturated: ${waiting} statements already wait for a connection`);
    this.name = 'PoolSaturatedError';
  }
}

/**
 * The connection pool, and the serving path's only way to the database: the key lookup, the
 * lists, the feeds, the single reads and the readiness ping are plain statements on it. Prisma
 * (src/prisma) runs on the same pool for the admin tool and the import, and the server never loads
 * it: its raw queries cost measurably more CPU per request for the same SQL (docs/benchmarks.md).
 * The boundary is checked by ESLint (eslint.config.mjs) and by test/serving-boundary.e2e-spec.ts.
 */
@Injectable()
export class Database implements Queryable, OnModuleDestroy {
  private static readonly logger = new Logger('Database');

  readonly pool: Pool;

  /** How many statements may wait for a connection (pool-config.ts); a test may raise it. */
  maxWaiting = MAX_WAITING;

  constructor(environment: Environment) {
    this.pool = new Pool(poolConfig(environment.DATABASE_URL));
    // A connection that dies while idle (a restart, an administrator's termination) is dropped
    // by the pool and reported here; without a listener the event would end the process.
    this.pool.on('error', (error) =>
      Database.logger.warn(`Idle connection lost: ${error.message}`),
    );
  }

  /**
   * One statement; values are bound parameters, never spliced into the text. Refused at once when
   * the pool's queue is full, and after CONNECTION_WAIT_MS without a connection (pool-config.ts).
   */
  async query<T extends QueryResultRow>(sql: string, values: unknown[]): Promise<T[]> {
    if (this.pool.waitingCount >= this.maxWaiting) {
      throw new PoolSaturatedError(this.pool.waitingCount);
    }
    const { rows } = await this.pool.query<T>(sql, values);
    return rows;
  }

  async onModuleDestroy(): Promise<void> {
    if (!this.pool.ended) await this.pool.end();
  }
}

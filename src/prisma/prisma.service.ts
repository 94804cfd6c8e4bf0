import { Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { PrismaPg } from '@prisma/adapter-pg';
import { Pool, type QueryResultRow } from 'pg';
import { Environment } from '../config/environment';
import { PrismaClient } from '../generated/prisma/client';

@Injectable()
export class PrismaService extends PrismaClient implements OnModuleDestroy {
  private static readonly logger = new Logger('Database');

  /** The connection pool under Prisma's adapter, shared with `query` below. */
  private readonly pool: Pool;

  constructor(environment: Environment) {
    const pool = new Pool({
      connectionString: environment.DATABASE_URL,
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
    });
    // A connection that dies while idle (a restart, an administrator's termination) is dropped
    // by the pool and reported here; without a listener the event would end the process.
    pool.on('error', (error) =>
      PrismaService.logger.warn(`Idle connection lost: ${error.message}`),
    );
    super({ adapter: new PrismaPg(pool) });
    this.pool = pool;
  }

  /**
   * One statement of a request's hot path (the key lookup, a list page), straight on the pool:
   * Prisma's raw queries cost measurably more CPU per request for the same SQL (see
   * docs/benchmarks.md). Values are bound parameters, never spliced into the text.
   */
  async query<T extends QueryResultRow>(sql: string, values: unknown[]): Promise<T[]> {
    const { rows } = await this.pool.query<T>(sql, values);
    return rows;
  }

  async onModuleDestroy(): Promise<void> {
    await this.$disconnect();
    // The adapter leaves a pool it was given to its owner.
    if (!this.pool.ended) await this.pool.end();
  }
}

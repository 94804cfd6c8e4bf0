import { Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { PrismaPg } from '@prisma/adapter-pg';
import { Pool, type QueryResultRow } from 'pg';
import { Environment } from '../config/environment';
import { PrismaClient } from '../generated/prisma/client';
import { poolConfig } from './pool-config';

@Injectable()
export class PrismaService extends PrismaClient implements OnModuleDestroy {
  private static readonly logger = new Logger('Database');

  /** The connection pool under Prisma's adapter, shared with `query` below. */
  private readonly pool: Pool;

  constructor(environment: Environment) {
    const pool = new Pool(poolConfig(environment.DATABASE_URL));
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

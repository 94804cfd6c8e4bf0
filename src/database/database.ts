import { Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { Pool, type QueryResultRow } from 'pg';
import { Environment } from '../config/environment';
import { FairQueue } from './fair-queue';
import { MAX_WAITING, POOL_SIZE, poolConfig, sessionSettingsSource } from './pool-config';
import { queryPool, type Queryable } from './queryable';
import { ReadReplica, ReplicaReads } from './read-replicas';

/**
 * The connection pools, and the serving path's only way to the database: the key lookup, the
 * lists, the feeds, the single reads and the readiness ping are plain statements on them. Prisma
 * (src/prisma) runs on the primary's pool for the admin tool and the import, and the server never
 * loads it: its raw queries cost measurably more CPU per request for the same SQL
 * (docs/benchmarks.md). The boundary is checked by ESLint (eslint.config.mjs) and by
 * test/serving-boundary.e2e-spec.ts.
 *
 * `query` runs on the primary (DATABASE_URL): what must see the latest write, such as a key
 * revoked a moment ago. `reads` runs on a read replica when DATABASE_READ_URL names some and one is
 * in use (read-replicas.ts), else on the primary: `reads` is then this object itself, at no cost.
 *
 * `forWorkspace` is how a workspace's request reads: `reads`, in the workspace's turn of the fair
 * queue (fair-queue.ts), which hands out POOL_SIZE connections per read pool. Unattributed
 * statements (`query`: the key lookup, the readiness ping) do not queue there, and the pools keep
 * PRIORITY_CONNECTIONS beyond the queue's seats for them (pool-config.ts).
 */
/*
 * The fair queue's hard bound on waiting statements, whatever the deadline's estimate allows: 20
 * workspaces at the default in-flight limit (400 statements, which drain in about 4 s at the
 * ~100 deep pages a second measured here) fit with room; a flood of 1,000 does not queue whole.
 */
export const MAX_QUEUED_STATEMENTS = 500;

/*
 * The share of the connections one workspace's statements may hold at once: 3 of 10. The rest stay
 * free for the other workspaces, whose statements then never wait for a connection behind a burst,
 * and share the database's CPU with 3 of the burst's statements rather than 10. Measured with the
 * noisy-neighbour workload (docs/benchmarks.md, (n); smoke runs of 5 s): the quiet workspace's p50
 * during the burst was 38 ms with 5 of 10, 10 ms with 2 of 10, against 4 ms alone. The serving
 * statements are CPU-bound (the data is in memory), and 3 keep this machine's 2 database cores busy:
 * a workspace alone at 10 concurrent requests, (c) and (d), is served about as fast. A database with
 * many more cores would want a larger share.
 */
const SEAT_SHARE_PER_WORKSPACE = 0.3;

@Injectable()
export class Database implements Queryable, OnModuleInit, OnModuleDestroy {
  private static readonly logger = new Logger('Database');

  readonly pool: Pool;
  readonly reads: Queryable;
  /** The replicas' checks and routing; undefined without DATABASE_READ_URL. */
  readonly replicaReads: ReplicaReads | undefined;

  /** How many statements may wait for a connection (pool-config.ts); a test may raise it. */
  maxWaiting = MAX_WAITING;

  /** The workspaces' turns at the read pools' connections. */
  readonly fairQueue: FairQueue;

  constructor(environment: Environment) {
    const settings = sessionSettingsSource(environment.DATABASE_POOLER);
    this.pool = new Pool(poolConfig(environment.DATABASE_URL, settings));
    // A connection that dies while idle (a restart, an administrator's termination) is dropped
    // by the pool and reported here; without a listener the event would end the process.
    this.pool.on('error', (error) =>
      Database.logger.warn(`Idle connection lost: ${error.message}`),
    );
    const readUrls = environment.DATABASE_READ_URL?.split(',') ?? [];
    if (readUrls.length > 0) {
      const replicas = readUrls.map(
        (url, index) =>
          new ReadReplica(`replica ${index + 1}`, url, settings, () => this.maxWaiting),
      );
      this.replicaReads = new ReplicaReads(this, replicas, environment.READ_REPLICA_MAX_LAG_MS);
    }
    this.reads = this.replicaReads ?? this;
    // One seat per connection of the pools that serve reads: each replica's, or the primary's.
    const seats = POOL_SIZE * Math.max(1, readUrls.length);
    this.fairQueue = new FairQueue({
      seats,
      seatsPerFlow: Math.ceil(seats * SEAT_SHARE_PER_WORKSPACE),
      deadlineMs: environment.QUEUE_DEADLINE_MS,
      maxWaiting: MAX_QUEUED_STATEMENTS,
    });
  }

  /** The reads of one workspace's request, in its turn (fair-queue.ts). */
  forWorkspace(workspaceId: string): Queryable {
    return {
      query: <T extends QueryResultRow>(sql: string, values: unknown[]) =>
        this.fairQueue.run(workspaceId, () => this.reads.query<T>(sql, values)),
    };
  }

  /** One statement on the primary (queryable.ts). */
  query<T extends QueryResultRow>(sql: string, values: unknown[]): Promise<T[]> {
    return queryPool<T>(this.pool, this.maxWaiting, sql, values);
  }

  onModuleInit(): void {
    this.replicaReads?.start();
  }

  async onModuleDestroy(): Promise<void> {
    this.replicaReads?.stop();
    const pools = [this.pool, ...(this.replicaReads?.replicas ?? []).map((r) => r.pool)];
    await Promise.all(pools.filter((pool) => !pool.ended).map((pool) => pool.end()));
  }
}

import { Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { context } from '@opentelemetry/api';
import { Pool, type QueryResultRow } from 'pg';
import { Environment } from '../config/environment';
import { FairQueue } from './fair-queue';
import {
  handleConnectionErrors,
  MAX_WAITING,
  POOL_SIZE,
  PRIORITY_CONNECTIONS,
  poolConfig,
  sessionSettingsSource,
} from './pool-config';
import { queryPool, type Queryable } from './queryable';
import { ReadReplica, ReplicaReads } from './read-replicas';
import { traceWait } from './statement-spans';

/**
 * The connection pools, and the serving path's only way to the database: the key lookup, the lists,
 * the feeds, the single reads and the readiness ping are plain statements on them. Prisma
 * (src/prisma) runs on the primary's pool for the admin tool and the import, and the server never
 * loads it: its raw queries cost measurably more CPU per request for the same SQL
 * (docs/benchmarks.md, "One statement per request"). The boundary is checked by ESLint
 * (eslint.config.mjs) and by test/built/serving-boundary.e2e-spec.ts.
 *
 * `query` runs on the primary (DATABASE_URL), on PRIORITY_CONNECTIONS of its own: what every
 * request needs before it is attributed to a workspace and must see the latest write (the key
 * lookup: a key revoked a moment ago), and the readiness ping. `reads` runs on a read replica when
 * DATABASE_READ_URL names some and one is in use (read-replicas.ts), else on the primary's `pool`.
 *
 * `forWorkspace` is how a workspace's request reads: `reads`, in the workspace's turn of the fair
 * queue (fair-queue.ts), which hands out POOL_SIZE seats per read pool, one per connection of it.
 * The two never share a connection: a seat taken is a connection free, never a place in a pool's
 * queue behind a burst of key lookups.
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
 * noisy-neighbour workload (docs/benchmarks.md, "Fair share"; smoke runs of 5 s): the quiet
 * workspace's p50 during the burst was 38 ms with 5 of 10, 10 ms with 2 of 10, against 4 ms alone.
 * The serving statements are CPU-bound (the data is in memory), and 3 keep this machine's 2
 * database cores busy: a workspace alone at 10 concurrent requests, (c) and (d), is served about as
 * fast. A database with many more cores would want a larger share.
 */
const SEAT_SHARE_PER_WORKSPACE = 0.3;

@Injectable()
export class Database implements Queryable, OnModuleInit, OnModuleDestroy {
  private static readonly logger = new Logger('Database');

  /** The primary's POOL_SIZE connections: the workspaces' reads, Prisma (the admin tool). */
  readonly pool: Pool;
  /** The primary's PRIORITY_CONNECTIONS: `query`. */
  readonly priorityPool: Pool;
  readonly reads: Queryable;
  /** The replicas' checks and routing; undefined without DATABASE_READ_URL. */
  readonly replicaReads: ReplicaReads | undefined;

  /** The workspaces' turns at the read pools' connections. */
  readonly fairQueue: FairQueue;

  constructor(environment: Environment) {
    const settings = sessionSettingsSource(environment.DATABASE_POOLER);
    this.pool = new Pool(poolConfig(environment.DATABASE_URL, settings, POOL_SIZE));
    this.priorityPool = new Pool(
      poolConfig(environment.DATABASE_URL, settings, PRIORITY_CONNECTIONS),
    );
    for (const pool of [this.pool, this.priorityPool]) {
      handleConnectionErrors(pool, (error) =>
        Database.logger.warn(`Idle connection lost: ${error.message}`),
      );
    }
    const primaryReads: Queryable = {
      query: <T extends QueryResultRow>(sql: string, values: unknown[]) =>
        queryPool<T>(this.pool, MAX_WAITING, sql, values),
    };
    const readUrls = environment.DATABASE_READ_URL?.split(',') ?? [];
    if (readUrls.length > 0) {
      const replicas = readUrls.map(
        (url, index) => new ReadReplica(`replica ${index + 1}`, url, settings),
      );
      this.replicaReads = new ReplicaReads(
        primaryReads,
        this,
        replicas,
        environment.READ_REPLICA_MAX_LAG_MS,
      );
    }
    this.reads = this.replicaReads ?? primaryReads;
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
      query: async <T extends QueryResultRow>(sql: string, values: unknown[]) => {
        const parent = context.active();
        const askedAt = performance.now();
        // The queue runs the statement at once (within `run`'s call) when a seat is free.
        let asking = true;
        let seated = false;
        const turn = this.fairQueue.run(workspaceId, () => {
          seated = true;
          if (!asking) traceWait(parent, workspaceId, askedAt);
          return this.reads.query<T>(sql, values);
        });
        asking = false;
        try {
          return await turn;
        } catch (error) {
          // Shed before its turn came (the statement's own failures are its span's).
          if (!seated) traceWait(parent, workspaceId, askedAt, error as Error);
          throw error;
        }
      },
    };
  }

  /** One statement on the primary's priority connections (queryable.ts). */
  query<T extends QueryResultRow>(sql: string, values: unknown[]): Promise<T[]> {
    return queryPool<T>(this.priorityPool, MAX_WAITING, sql, values);
  }

  /**
   * Opens every connection of the read pools and the priority pool, before the server listens
   * (pool-config.ts, `min`): the first requests then run on open connections. A connection that
   * cannot be opened (the database down or slow) is left to the first statement that needs it.
   */
  async openConnections(): Promise<void> {
    const opened = await Promise.allSettled(
      this.allPools().flatMap((pool) =>
        Array.from({ length: pool.options.max ?? 0 }, () => pool.connect()),
      ),
    );
    for (const connection of opened) {
      if (connection.status === 'fulfilled') connection.value.release();
    }
  }

  onModuleInit(): void {
    this.replicaReads?.start();
  }

  async onModuleDestroy(): Promise<void> {
    this.replicaReads?.stop();
    await Promise.all(
      this.allPools()
        .filter((pool) => !pool.ended)
        .map((pool) => pool.end()),
    );
  }

  /** The primary's two pools and each replica's. */
  private allPools(): Pool[] {
    const replicas = (this.replicaReads?.replicas ?? []).map((replica) => replica.pool);
    return [this.pool, this.priorityPool, ...replicas];
  }
}

import { Logger } from '@nestjs/common';
import { Pool, type QueryResultRow } from 'pg';
import { isDatabaseUnavailable, isPoolSaturated } from './database-errors';
import {
  handleConnectionErrors,
  MAX_WAITING,
  POOL_SIZE,
  poolConfig,
  type SessionSettingsSource,
} from './pool-config';
import { queryPool, type Queryable } from './queryable';

/*
 * How often each instance checks its replicas: every second. A replica that stops or falls behind
 * is skipped within about a second of it, a fifth of the default lag bound (5 s), and the check
 * costs one statement a second on each replica and one on the primary per instance, nothing next to
 * the thousands of statements a second an instance serves (docs/benchmarks.md, "Results"). Requests
 * never wait for a check: they read the last verdict.
 */
export const REPLICA_CHECK_INTERVAL_MS = 1_000;
// A check that gets no answer within this counts as a failure: the replica is skipped.
const CHECK_TIMEOUT_MS = 1_000;
// query_canceled: a statement that ran STATEMENT_TIMEOUT_MS on a replica would be as slow on the
// primary; running it again there would double the wait and the load.
const QUERY_CANCELED = '57014';
// serialization_failure: on a standby, a statement cancelled by a conflict with recovery (the
// primary vacuumed rows it was reading). The primary has no such conflict.
const RECOVERY_CONFLICT = '40001';

/** Where the primary's WAL was at a moment: what a replica must have replayed to be that recent. */
interface WalSample {
  at: number;
  lsn: bigint;
}

/** What readiness reports of a replica. */
export interface ReplicaStatus {
  status: 'in use' | 'skipped';
  /** How far behind the primary it was at the last check, in ms (to the check's resolution). */
  lagMs?: number;
  reason?: string;
}

/** A hot standby of the primary: its pool, and whether reads may go to it. */
export class ReadReplica implements Queryable {
  private static readonly logger = new Logger('ReadReplica');
  readonly pool: Pool;
  /** Why reads do not go to it; null when they may. Set by the checks and by a failed read. */
  skipped: string | null = 'not checked yet';
  lagMs: number | undefined;

  constructor(
    readonly name: string,
    url: string,
    settings: SessionSettingsSource,
  ) {
    // The fair queue's POOL_SIZE seats, and one connection for the checks beside them.
    this.pool = new Pool(poolConfig(url, settings, POOL_SIZE + 1));
    handleConnectionErrors(this.pool, (error) =>
      ReadReplica.logger.warn(`${name}: idle connection lost: ${error.message}`),
    );
  }

  query<T extends QueryResultRow>(sql: string, values: unknown[]): Promise<T[]> {
    return queryPool<T>(this.pool, MAX_WAITING, sql, values);
  }

  /**
   * Up and replaying, and at most maxLagMs behind: its replayed WAL position reaches a position
   * the primary had at most maxLagMs ago (the newest such sample gives the lag). Lag measured so
   * needs no clock shared with the primary and no recent commit on it: an idle primary whose WAL
   * the replica has replayed is 0 behind, however old its last transaction.
   */
  async check(samples: WalSample[], now: number, maxLagMs: number): Promise<void> {
    let verdict: string | null;
    try {
      const [row] = await withTimeout(
        this.query<{ standby: boolean; replayed: string | null }>(
          `SELECT pg_is_in_recovery() AS standby,
            pg_wal_lsn_diff(pg_last_wal_replay_lsn(), '0/0')::text AS replayed`,
          [],
        ),
        CHECK_TIMEOUT_MS,
      );
      if (!row.standby || row.replayed === null) {
        // A promoted standby may have diverged from the primary: a change feed read there could
        // hand out positions the primary never gives.
        verdict = 'not a standby';
        this.lagMs = undefined;
      } else {
        const replayed = BigInt(row.replayed);
        const reached = samples.filter((sample) => sample.lsn <= replayed).at(-1);
        this.lagMs = reached === undefined ? undefined : now - reached.at;
        verdict =
          this.lagMs !== undefined && this.lagMs <= maxLagMs
            ? null
            : `more than ${maxLagMs} ms behind the primary`;
      }
    } catch (error) {
      this.lagMs = undefined;
      verdict = `unreachable (${error instanceof Error ? error.message : String(error)})`;
    }
    this.setSkipped(verdict);
  }

  setSkipped(reason: string | null): void {
    if (reason === this.skipped) return;
    if (reason === null) ReadReplica.logger.log(`${this.name}: reads go to it again`);
    else ReadReplica.logger.warn(`${this.name}: skipped, ${reason}`);
    this.skipped = reason;
  }

  status(): ReplicaStatus {
    return this.skipped === null
      ? { status: 'in use', lagMs: this.lagMs }
      : { status: 'skipped', lagMs: this.lagMs, reason: this.skipped };
  }
}

/**
 * The reads that may be a little stale (lists, feeds, single items): each on the next replica in
 * use, in turn, or on the primary when none is. A read that finds its replica gone is run again
 * on the primary, and the replica skipped until a check finds it back.
 */
export class ReplicaReads implements Queryable {
  private turn = 0;
  private samples: WalSample[] = [];
  private checking: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;

  /**
   * `primary` serves the reads when no replica may (the primary's pool of the workspaces'
   * statements); `primaryChecks` samples its WAL position (the primary's priority connections).
   */
  constructor(
    private readonly primary: Queryable,
    private readonly primaryChecks: Queryable,
    readonly replicas: ReadReplica[],
    private readonly maxLagMs: number,
  ) {}

  async query<T extends QueryResultRow>(sql: string, values: unknown[]): Promise<T[]> {
    const inUse = this.replicas.filter((replica) => replica.skipped === null);
    if (inUse.length === 0) return this.primary.query<T>(sql, values);
    const replica = inUse[this.turn++ % inUse.length];
    try {
      return await replica.query<T>(sql, values);
    } catch (error) {
      if (!worthThePrimary(error)) throw error;
      if (!isRecoveryConflict(error)) {
        replica.setSkipped(`a read failed (${(error as Error).message})`);
      }
      return this.primary.query<T>(sql, values);
    }
  }

  /** Checks now, then every REPLICA_CHECK_INTERVAL_MS until stop(). */
  start(): void {
    void this.check();
    this.timer = setInterval(() => void this.check(), REPLICA_CHECK_INTERVAL_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** One round of checks (a test calls it to see a change at once); joins one under way. */
  check(): Promise<void> {
    this.checking ??= this.checkAll().finally(() => (this.checking = undefined));
    return this.checking;
  }

  private async checkAll(): Promise<void> {
    const now = Date.now();
    try {
      const [row] = await withTimeout(
        this.primaryChecks.query<{ lsn: string }>(
          `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::text AS lsn`,
          [],
        ),
        CHECK_TIMEOUT_MS,
      );
      this.samples.push({ at: now, lsn: BigInt(row.lsn) });
    } catch {
      // Without the primary's position the samples age, and replicas drop out once the newest
      // they have reached is older than the bound: their lag can no longer be vouched for.
    }
    // Older samples can only say "more than the bound behind"; keep one of them for that.
    const horizon = now - this.maxLagMs;
    const recent = this.samples.filter((sample) => sample.at >= horizon);
    const older = this.samples.filter((sample) => sample.at < horizon).at(-1);
    this.samples = older === undefined ? recent : [older, ...recent];
    await Promise.all(
      this.replicas.map((replica) => replica.check(this.samples, now, this.maxLagMs)),
    );
  }
}

function worthThePrimary(error: unknown): boolean {
  if (isRecoveryConflict(error)) return true;
  const code = (error as { code?: unknown } | null)?.code;
  return isDatabaseUnavailable(error) && !isPoolSaturated(error) && code !== QUERY_CANCELED;
}

function isRecoveryConflict(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === RECOVERY_CONFLICT;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { Clock } from '../common/clock';
import { Database } from '../database/database';
import { recordApiKeyUses } from './api-keys.sql';

// lastUsedAt is informative: one write per key per minute is enough, and keeps reads read-only.
const LAST_USED_RESOLUTION_MS = 60_000;

/**
 * The keys' `lastUsedAt`, written after the request that used the key rather than before its
 * answer: a request never waits for a commit. Measured on the benchmark's machine under workload
 * (a), the write took 3 to 35 ms (its commit waits for the WAL's flush) against 0.3 to 3.5 ms for
 * the key's lookup; awaited, it delayed the first request of each key each minute by that much,
 * and held one of the key lookups' two connections meanwhile.
 *
 * One write at a time: the uses recorded while one is under way go together in the next, one
 * statement for any number of keys. So the writes hold at most one of the key lookups' two
 * connections, whatever the number of keys. A write the database refuses is logged, and the key is
 * written on its next request. The application's shutdown waits for the writes (onModuleDestroy,
 * before the database's pools close: AuthModule's hooks run before DatabaseModule's): a SIGTERM
 * loses none; a SIGKILL loses the uses of the last moment, which the key's next request records.
 */
@Injectable()
export class KeyUses implements OnModuleDestroy {
  private static readonly logger = new Logger('KeyUses');
  /** When this process last marked each key used (by key id, oldest first; pruned as they age). */
  private readonly recorded = new Map<string, number>();
  /** Uses recorded and not written yet: when, by key id. */
  private pending = new Map<string, Date>();
  private writing: Promise<void> | undefined;

  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
  ) {}

  /** Marks the key used now, unless it was within the minute; written after, not awaited. */
  record(id: string, lastUsedAt: Date | null): void {
    const now = this.clock.now();
    if (lastUsedAt && now - lastUsedAt.getTime() < LAST_USED_RESOLUTION_MS) return;
    // Concurrent requests of a key read the same old lastUsedAt: the first of them records it.
    const recorded = this.recorded.get(id);
    if (recorded !== undefined && now - recorded < LAST_USED_RESOLUTION_MS) return;
    this.forgetRecordedBefore(now - LAST_USED_RESOLUTION_MS);
    this.recorded.delete(id);
    this.recorded.set(id, now);
    this.pending.set(id, new Date(now));
    this.writing ??= this.writeAll();
  }

  /** Resolves once every use recorded so far is written, or its write failed. */
  async written(): Promise<void> {
    while (this.writing !== undefined) await this.writing;
  }

  async onModuleDestroy(): Promise<void> {
    await this.written();
  }

  private async writeAll(): Promise<void> {
    try {
      while (this.pending.size > 0) {
        const uses = this.pending;
        this.pending = new Map();
        try {
          await recordApiKeyUses(this.database, uses, LAST_USED_RESOLUTION_MS);
        } catch (error) {
          // The answers went out; each key's next request records it again.
          for (const id of uses.keys()) this.recorded.delete(id);
          KeyUses.logger.warn(
            `lastUsedAt of ${uses.size} keys not written: ${(error as Error).message}`,
          );
        }
      }
    } finally {
      this.writing = undefined;
    }
  }

  private forgetRecordedBefore(horizon: number): void {
    // Oldest first (a key recorded again moves to the end): stop at the first recent one.
    for (const [id, at] of this.recorded) {
      if (at >= horizon) return;
      this.recorded.delete(id);
    }
  }
}

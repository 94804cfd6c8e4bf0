import { Logger } from '@nestjs/common';
import type { ThrottlerStorage } from '@nestjs/throttler';
import { refundHit } from './rate-limit-refund';
import { Clock } from '../common/clock';
import type { ThrottlerStorageRecord } from './fixed-window-throttler.storage';

// At most one warning this often while the shared store fails, not one line per request; and the
// recovery is told only after a warning, so that even a flapping store logs little.
const WARNING_INTERVAL_MS = 60_000;

/**
 * Counts in the shared store, or in this process's own when the shared one fails: an outage of
 * Redis must not become an outage of the API. Meanwhile each instance counts on its own from zero,
 * so a key may get up to its limit once per instance; each request tries the shared store again,
 * so sharing resumes as soon as it answers.
 */
export class FailOpenThrottlerStorage implements ThrottlerStorage {
  private readonly logger = new Logger('RateLimit');
  /** Told of each failure of the shared store (the metrics). */
  observer?: { failed: () => void };
  private outageReported = false;
  private lastWarningAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly shared: ThrottlerStorage,
    private readonly local: ThrottlerStorage,
    private readonly clock: Clock,
  ) {}

  async increment(
    key: string,
    ttl: number,
    limit: number,
    blockDuration: number,
    throttlerName: string,
  ): Promise<ThrottlerStorageRecord> {
    let record: ThrottlerStorageRecord;
    try {
      record = await this.shared.increment(key, ttl, limit, blockDuration, throttlerName);
    } catch (error) {
      this.reportFailure(error);
      return this.local.increment(key, ttl, limit, blockDuration, throttlerName);
    }
    if (this.outageReported) {
      this.outageReported = false;
      this.logger.log('Shared rate-limit store answering again: limits are shared again');
    }
    return record;
  }

  /** Gives back one hit where it was counted: the shared store, or the local one while it fails. */
  async refund(key: string): Promise<void> {
    try {
      await refundHit(this.shared, key);
    } catch (error) {
      this.reportFailure(error);
      await refundHit(this.local, key);
    }
  }

  private reportFailure(error: unknown): void {
    this.observer?.failed();
    const now = this.clock.now();
    if (now - this.lastWarningAt < WARNING_INTERVAL_MS) return;
    this.lastWarningAt = now;
    this.outageReported = true;
    const reason = error instanceof Error ? error.message : String(error);
    this.logger.warn(`Shared rate-limit store failing (${reason}): counting per instance`);
  }
}

import { Injectable } from '@nestjs/common';
import { InjectThrottlerStorage, ThrottlerException, ThrottlerStorage } from '@nestjs/throttler';
import { Clock } from '../common/clock';
import { type HeaderSink, setRateLimitHeaders } from '../http/rate-limit-headers';
import { Environment } from '../config/environment';

const WINDOW_MS = 60_000;

/**
 * Limits requests that fail authentication per client address, in the same store as the per-key
 * limit, so that a flood of bad keys cannot exhaust the database.
 */
@Injectable()
export class AuthFailureLimiter {
  private readonly limit: number;
  // Addresses known to be over their budget, until when: lets the guard refuse them before the
  // key lookup. Each instance learns it from its own first refusal, at the cost of one query.
  private readonly blockedUntil = new Map<string, number>();

  constructor(
    @InjectThrottlerStorage() private readonly storage: ThrottlerStorage,
    private readonly clock: Clock,
    environment: Environment,
  ) {
    this.limit = environment.AUTH_FAILURE_LIMIT_PER_MINUTE;
  }

  isBlocked(address: string): boolean {
    const until = this.blockedUntil.get(address);
    if (until === undefined) return false;
    if (until > this.clock.now()) return true;
    this.blockedUntil.delete(address);
    return false;
  }

  /** Counts one failure; throws the 429 once the address is over its budget. */
  async recordFailure(address: string, response: HeaderSink): Promise<void> {
    const { totalHits, timeToExpire } = await this.storage.increment(
      `auth-failure:${address}`,
      WINDOW_MS,
      this.limit,
      WINDOW_MS,
      'auth-failure',
    );
    if (totalHits <= this.limit) return;
    if (!this.isBlocked(address)) {
      this.forgetExpired();
      this.blockedUntil.set(address, this.clock.now() + timeToExpire * 1000);
    }
    setRateLimitHeaders(
      response,
      { limit: this.limit, remaining: 0, resetSeconds: timeToExpire },
      { policy: 'auth-failures', refused: true },
    );
    throw new ThrottlerException();
  }

  private forgetExpired(): void {
    const now = this.clock.now();
    for (const [address, until] of this.blockedUntil) {
      if (until <= now) this.blockedUntil.delete(address);
    }
  }
}

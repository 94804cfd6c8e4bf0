import type { ThrottlerStorage } from '@nestjs/throttler';
import { Clock } from '../common/clock';

interface Window {
  hits: number;
  endsAt: number;
}

export type ThrottlerStorageRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

const SWEEP_INTERVAL_MS = 60_000;

/**
 * The in-process store of the rate limit: fixed windows that start with a tracker's first hit,
 * on an injectable clock. Valid for a single instance only; several instances need a shared store.
 */
export class FixedWindowThrottlerStorage implements ThrottlerStorage {
  private readonly windows = new Map<string, Window>();

  constructor(private readonly clock: Clock) {
    // Forget ended windows so that the map does not grow with every key and address ever seen;
    // unref'd, so that it never keeps a process alive.
    setInterval(() => this.sweep(), SWEEP_INTERVAL_MS).unref();
  }

  increment(key: string, ttl: number, limit: number): Promise<ThrottlerStorageRecord> {
    const now = this.clock.now();
    let window = this.windows.get(key);
    if (!window || window.endsAt <= now) {
      window = { hits: 0, endsAt: now + ttl };
      this.windows.set(key, window);
    }
    window.hits += 1;
    const secondsLeft = Math.max(1, Math.ceil((window.endsAt - now) / 1000));
    const isBlocked = window.hits > limit;
    return Promise.resolve({
      totalHits: window.hits,
      timeToExpire: secondsLeft,
      isBlocked,
      timeToBlockExpire: isBlocked ? secondsLeft : 0,
    });
  }

  /** Gives back one hit of the key's current window (a 304: rate-limit-refund.ts). */
  refund(key: string): Promise<void> {
    const window = this.windows.get(key);
    if (window && window.endsAt > this.clock.now() && window.hits > 0) window.hits -= 1;
    return Promise.resolve();
  }

  private sweep(): void {
    const now = this.clock.now();
    for (const [key, window] of this.windows) {
      if (window.endsAt <= now) this.windows.delete(key);
    }
  }
}

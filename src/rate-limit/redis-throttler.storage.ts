import type { ThrottlerStorage } from '@nestjs/throttler';
import type Redis from 'ioredis';
import type { ThrottlerStorageRecord } from './fixed-window-throttler.storage';

/*
 * One script, so that counting is atomic across every instance: the hit is counted, the window
 * is opened by the key's first hit (never moved by later ones) and its time left read, with no
 * other command in between. A counter found without an expiry gets one rather than living for ever.
 * Returns { hits, milliseconds left }.
 */
const COUNT_HIT = `
local hits = redis.call('INCR', KEYS[1])
local left = redis.call('PTTL', KEYS[1])
if left < 0 then
  left = tonumber(ARGV[1])
  redis.call('PEXPIRE', KEYS[1], left)
end
return { hits, left }
`;

// Gives back one hit, only to a window still open (an expired key is not brought back to life).
const REFUND_HIT = `
if redis.call('PTTL', KEYS[1]) > 0 and tonumber(redis.call('GET', KEYS[1]) or '0') > 0 then
  redis.call('DECR', KEYS[1])
end
return 0
`;

const KEY_PREFIX = 'rate-limit:';

/**
 * The rate-limit store shared by all instances: the same fixed windows as
 * FixedWindowThrottlerStorage (starting at a tracker's first hit, blocked past the limit until
 * the window ends), kept in Redis.
 *
 * Time is Redis's: a window ends when its key expires on the Redis server, so instances whose
 * clocks differ still agree, and the injected Clock plays no part here (tests end a window by
 * expiring its key, and read the time left with PTTL).
 */
export class RedisThrottlerStorage implements ThrottlerStorage {
  constructor(private readonly redis: Redis) {}

  /** Gives back one hit of the key's current window (a 304: rate-limit-refund.ts). */
  async refund(key: string): Promise<void> {
    await this.redis.eval(REFUND_HIT, 1, KEY_PREFIX + key);
  }

  async increment(key: string, ttl: number, limit: number): Promise<ThrottlerStorageRecord> {
    const reply = await this.redis.eval(COUNT_HIT, 1, KEY_PREFIX + key, ttl);
    const [hits, millisecondsLeft] = countOf(reply);
    const secondsLeft = Math.max(1, Math.ceil(millisecondsLeft / 1000));
    const isBlocked = hits > limit;
    return {
      totalHits: hits,
      timeToExpire: secondsLeft,
      isBlocked,
      timeToBlockExpire: isBlocked ? secondsLeft : 0,
    };
  }
}

function countOf(reply: unknown): [number, number] {
  if (
    Array.isArray(reply) &&
    reply.length === 2 &&
    reply.every((value) => typeof value === 'number')
  ) {
    return reply as [number, number];
  }
  throw new TypeError(`Unexpected reply of the rate-limit script: ${JSON.stringify(reply)}`);
}

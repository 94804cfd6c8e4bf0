import Redis from 'ioredis';
import { randomBytes } from 'node:crypto';
import { RedisThrottlerStorage } from '../../../src/rate-limit/redis-throttler.storage';

/*
 * Against a real Redis (the test run's, see test/support/redis.ts), every key under a prefix of
 * its own. Windows are Redis's: a test moves time by setting a key's expiry, never by sleeping.
 */
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const TTL = 60_000;
const LIMIT = 3;

describe('RedisThrottlerStorage', () => {
  let redis: Redis;
  let storage: RedisThrottlerStorage;
  let key: string;
  const hit = (tracker = key) => storage.increment(tracker, TTL, LIMIT);
  /** The Redis key of a tracker's window (the storage's own prefix under the test's). */
  const windowOf = (tracker = key) => `rate-limit:${tracker}`;

  beforeAll(() => {
    const prefix = `test:${process.env.TEST_RUN_ID}:${randomBytes(6).toString('hex')}:`;
    redis = new Redis(REDIS_URL, { keyPrefix: prefix });
    storage = new RedisThrottlerStorage(redis);
  });

  afterAll(async () => {
    await redis.quit();
  });

  beforeEach(() => {
    key = `k-${randomBytes(4).toString('hex')}`;
  });

  it('opens a window of one ttl at the first hit', async () => {
    expect(await hit()).toEqual({
      totalHits: 1,
      timeToExpire: 60,
      isBlocked: false,
      timeToBlockExpire: 0,
    });
    const left = await redis.pttl(windowOf());
    expect(left).toBeGreaterThan(0);
    expect(left).toBeLessThanOrEqual(TTL);
  });

  it('gives one hit back (a 304), never below 0 and never to a window that has ended', async () => {
    await hit();
    await hit();
    await storage.refund(key);
    expect((await hit()).totalHits).toBe(2);
    await storage.refund(key);
    await storage.refund(key);
    await storage.refund(key);
    expect(await redis.get(windowOf())).toBe('0');
    // No window: nothing is created (a refund never opens one, nor one without expiry).
    await storage.refund('never-hit');
    expect(await redis.exists(windowOf('never-hit'))).toBe(0);
  });

  it('counts the hits of a window', async () => {
    expect((await hit()).totalHits).toBe(1);
    expect((await hit()).totalHits).toBe(2);
    expect((await hit()).totalHits).toBe(3);
  });

  it('does not move the end of the window on later hits', async () => {
    await hit();
    await redis.pexpire(windowOf(), 5_000);

    const record = await hit();

    expect(record.totalHits).toBe(2);
    expect(record.timeToExpire).toBeLessThanOrEqual(5);
    expect(await redis.pttl(windowOf())).toBeLessThanOrEqual(5_000);
  });

  it('starts a new window at the first hit after the key expired', async () => {
    await hit();
    await hit();
    // The window ends on the Redis server, as it does after a minute.
    await redis.pexpire(windowOf(), 0);

    expect(await hit()).toEqual({
      totalHits: 1,
      timeToExpire: 60,
      isBlocked: false,
      timeToBlockExpire: 0,
    });
  });

  it('blocks past the limit, for the time left of the window in whole seconds rounded up', async () => {
    for (let i = 1; i <= LIMIT; i++) expect((await hit()).isBlocked).toBe(false);
    // 30.0xx to 31 s left when the next hit arrives.
    await redis.pexpire(windowOf(), 31_000);

    expect(await hit()).toEqual({
      totalHits: LIMIT + 1,
      timeToExpire: 31,
      isBlocked: true,
      timeToBlockExpire: 31,
    });
  });

  it('gives at least 1 second while the window lasts', async () => {
    await hit();
    await redis.pexpire(windowOf(), 1_000);

    const record = await hit();

    expect(record.totalHits).toBe(2);
    expect(record.timeToExpire).toBe(1);
  });

  it('keeps one window per key', async () => {
    for (let i = 0; i < LIMIT + 1; i++) await hit('a' + key);

    expect(await hit('b' + key)).toEqual({
      totalHits: 1,
      timeToExpire: 60,
      isBlocked: false,
      timeToBlockExpire: 0,
    });
    expect((await hit('a' + key)).totalHits).toBe(LIMIT + 2);
  });

  it('gives an expiry to a counter found without one, so that it cannot block for ever', async () => {
    await redis.set(windowOf(), 7);

    const record = await hit();

    expect(record.totalHits).toBe(8);
    expect(record.timeToExpire).toBe(60);
    expect(await redis.pttl(windowOf())).toBeGreaterThan(0);
  });

  it('counts every one of many concurrent hits from two connections, as from two instances', async () => {
    const otherConnection = redis.duplicate();
    const other = new RedisThrottlerStorage(otherConnection);
    try {
      const records = await Promise.all(
        Array.from({ length: 300 }, (_, i) =>
          (i % 2 === 0 ? storage : other).increment(key, TTL, LIMIT),
        ),
      );

      expect(records.map((r) => r.totalHits).sort((x, y) => x - y)).toEqual(
        Array.from({ length: 300 }, (_, i) => i + 1),
      );
      expect(records.filter((r) => !r.isBlocked)).toHaveLength(LIMIT);
    } finally {
      await otherConnection.quit();
    }
  });
});

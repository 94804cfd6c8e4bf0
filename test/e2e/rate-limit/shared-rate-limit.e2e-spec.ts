import { Logger } from '@nestjs/common';
import Redis from 'ioredis';
import request from 'supertest';
import { generateApiKey } from '../../../src/auth/api-key';
import { REDIS_CLIENT } from '../../../src/redis/redis-client';
import { createTestApp, listening, type TestApp } from '../../support/app';
import { findFreePort } from '../../../src/dev/free-port';
import { createApiKey, createWorkspace } from '../../support/factories';
import { until } from '../../support/until';
import {
  TEST_REDIS_URL,
  ThrowawayRedis,
  uniqueKeyPrefix,
  useRedisKeyPrefix,
} from '../../support/redis';

/*
 * With REDIS_URL, windows are counted and timed by Redis (its key expiry), not by the instances'
 * clocks: the manual clock of each app does not end them, and the tests end one by expiring its
 * key, never by sleeping.
 */

async function newKey(t: TestApp): Promise<{ id: string; key: string }> {
  const workspace = await createWorkspace(t.prisma);
  return createApiKey(t.prisma, workspace.id);
}

const getMe = (url: string, key: string) =>
  request(url).get('/v1/me').set('Authorization', `Bearer ${key}`);

const remainingOf = (response: request.Response) => response.headers['x-ratelimit-remaining'];

describe('two instances on one Redis', () => {
  const prefix = uniqueKeyPrefix();
  // The test's own view of Redis, with the apps' prefix.
  let redis: Redis;
  let first: TestApp;
  let second: TestApp;
  let urls: [string, string];

  beforeAll(async () => {
    redis = new Redis(TEST_REDIS_URL, { keyPrefix: prefix });
    const options = {
      env: { REDIS_URL: TEST_REDIS_URL, AUTH_FAILURE_LIMIT_PER_MINUTE: '5' },
      customize: useRedisKeyPrefix(TEST_REDIS_URL, prefix),
    };
    first = await createTestApp(options);
    second = await createTestApp({ ...options, database: first.database });
    urls = [await listening(first), await listening(second)];
  });

  afterAll(async () => {
    await second.close();
    await first.close();
    await redis.quit();
  });

  it('counts one budget for a key across both', async () => {
    const { key } = await newKey(first);
    const remaining = [];
    for (const url of [urls[0], urls[1], urls[0], urls[1]]) {
      remaining.push(remainingOf(await getMe(url, key)));
    }

    expect(remaining).toEqual(['119', '118', '117', '116']);
  });

  it('gives exactly 120 x 200 and 180 x 429 to 300 concurrent requests of one key on both', async () => {
    const { key } = await newKey(first);

    const responses = await Promise.all(
      Array.from({ length: 300 }, (_, i) => getMe(urls[i % 2], key)),
    );

    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(120);
    expect(statuses.filter((status) => status === 429)).toHaveLength(180);
    // Each accepted request had its own place in the window, whichever instance answered it.
    const remaining = responses
      .filter((response) => response.status === 200)
      .map((response) => Number(remainingOf(response)))
      .sort((a, b) => a - b);
    expect(remaining).toEqual(Array.from({ length: 120 }, (_, i) => i));
  });

  it('ends the window when its Redis key expires, whatever the instances’ clocks say', async () => {
    const { id, key } = await newKey(first);
    const window = `rate-limit:api-key:${id}`;
    await getMe(urls[0], key);
    const left = await redis.pttl(window);
    expect(left).toBeGreaterThan(0);
    expect(left).toBeLessThanOrEqual(60_000);
    await redis.set(window, 120, 'KEEPTTL');
    expect((await getMe(urls[1], key)).status).toBe(429);

    // The apps' clocks play no part in a Redis window.
    first.clock.advance(60_000);
    second.clock.advance(60_000);
    expect((await getMe(urls[0], key)).status).toBe(429);

    await redis.pexpire(window, 0);
    const renewed = await getMe(urls[1], key);
    expect(renewed.status).toBe(200);
    expect(remainingOf(renewed)).toBe('119');
    expect(remainingOf(await getMe(urls[0], key))).toBe('118');
  });

  it('counts failed authentications of an address across both', async () => {
    const fail = (url: string) =>
      request(url).get('/v1/me').set('Authorization', `Bearer ${generateApiKey()}`);
    const statuses = [];
    for (const url of [urls[0], urls[1], urls[0], urls[1], urls[0], urls[1]]) {
      statuses.push((await fail(url)).status);
    }

    expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
  });
});

describe('Redis stopping and coming back', () => {
  let server: ThrowawayRedis;
  let observer: Redis;
  let t: TestApp;
  let url: string;
  let appRedis: Redis;
  let key: { id: string; key: string };
  const countInRedis = () => observer.get(`rate-limit:api-key:${key.id}`);

  beforeAll(async () => {
    server = new ThrowawayRedis(await findFreePort());
    await server.start();
    observer = new Redis(server.url, { lazyConnect: true });
    observer.on('error', () => undefined);
    t = await createTestApp({ env: { REDIS_URL: server.url } });
    url = await listening(t);
    appRedis = t.app.get<Redis>(REDIS_CLIENT);
    key = await newKey(t);
  });

  afterAll(async () => {
    await t.close();
    await observer.quit();
    await server.stop();
  });

  afterEach(() => {
    jest.restoreAllMocks();
  });

  it('keeps answering while Redis is down, and shares the count again once it is back', async () => {
    const warnings = jest.spyOn(Logger.prototype, 'warn');
    expect(remainingOf(await getMe(url, key.key))).toBe('119');
    expect(remainingOf(await getMe(url, key.key))).toBe('118');
    expect(await countInRedis()).toBe('2');

    await server.stop();
    const whileDown = [];
    for (let i = 0; i < 5; i++) whileDown.push(await getMe(url, key.key));

    // Answered, and counted by this instance alone from zero (fail open).
    expect(whileDown.map((response) => response.status)).toEqual([200, 200, 200, 200, 200]);
    expect(whileDown.map(remainingOf)).toEqual(['119', '118', '117', '116', '115']);
    // One warning of the rate limit for the whole outage, not one per request.
    const rateLimitWarnings = warnings.mock.calls.filter(([message]) =>
      String(message).includes('rate-limit store'),
    );
    expect(rateLimitWarnings).toHaveLength(1);

    // The same port, empty (no persistence), as a Redis restarted after a crash.
    await server.start();
    await until('the app to reconnect to Redis', () => appRedis.status === 'ready');
    const afterwards = await getMe(url, key.key);

    expect(afterwards.status).toBe(200);
    expect(remainingOf(afterwards)).toBe('119');
    expect(await countInRedis()).toBe('1');
  });
});

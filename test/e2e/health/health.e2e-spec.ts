import request from 'supertest';
import { generateApiKey } from '../../../src/auth/api-key';
import { createTestApp, type TestApp } from '../../support/app';
import { findFreePort } from '../../../src/dev/free-port';
import { createTenant, getWithKey } from '../../support/http';
import { TEST_REDIS_URL, uniqueKeyPrefix, useRedisKeyPrefix } from '../../support/redis';

const UP = { status: 'up' };

/** The headers every response of the service carries, health included. */
function expectContractHeaders(response: request.Response): void {
  expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(response.headers['cache-control']).toBe('no-store');
  expect(response.headers['x-request-id']).toEqual(expect.any(String));
  expect(response.headers['x-ratelimit-limit']).toBeUndefined();
}

describe('health, without Redis', () => {
  let t: TestApp;
  const get = (path: string) => request(t.app.getHttpServer()).get(path);

  beforeAll(async () => {
    t = await createTestApp({
      env: { RATE_LIMIT_PER_MINUTE: '3', AUTH_FAILURE_LIMIT_PER_MINUTE: '3' },
    });
  });

  afterAll(async () => {
    await t.close();
  });

  it('GET /health/live answers 200 with terminus body and the contract headers', async () => {
    const response = await get('/health/live');

    expect(response.status).toBe(200);
    expect(response.body).toEqual({ status: 'ok', info: {}, error: {}, details: {} });
    expectContractHeaders(response);
  });

  it('GET /health/ready answers 200 when the database answers, and checks no Redis', async () => {
    const response = await get('/health/ready');

    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      status: 'ok',
      info: { database: UP },
      error: {},
      details: { database: UP },
    });
    expectContractHeaders(response);
  });

  it('is neither under /v1 nor anywhere else', async () => {
    expect((await get('/v1/health/live')).status).toBe(404);
    expect((await get('/health')).status).toBe(404);
  });

  it('needs no key, and a wrong one is neither refused nor counted as an authentication failure', async () => {
    for (let i = 0; i < 10; i++) {
      const response = await get('/health/ready').set(
        'Authorization',
        `Bearer ${generateApiKey()}`,
      );
      expect(response.status).toBe(200);
    }

    // The limit is 3 failures per address: the ten above would have used it up.
    const failure = await get('/v1/me').set('Authorization', `Bearer ${generateApiKey()}`);
    expect(failure.status).toBe(401);
  });

  it('never answers 429, and does not spend the budget of a key sent with it', async () => {
    const { key } = await createTenant(t.prisma);
    for (let i = 0; i < 100; i++) {
      for (const path of ['/health/live', '/health/ready']) {
        const response = await get(path).set('Authorization', `Bearer ${key}`);
        if (response.status !== 200) throw new Error(`${response.status} on ${path} at call ${i}`);
      }
    }

    const me = await getWithKey(t.app, '/v1/me', key);
    expect(me.status).toBe(200);
    expect(me.headers['x-ratelimit-remaining']).toBe('2');
  });
});

describe('health, with the database down', () => {
  let t: TestApp;

  beforeAll(async () => {
    const port = await findFreePort();
    t = await createTestApp({
      env: { DATABASE_URL: `postgresql://postgres@127.0.0.1:${port}/nothing_here_test` },
    });
  });

  afterAll(async () => {
    await t.close();
  });

  it('GET /health/ready answers 503 with terminus body naming the database', async () => {
    const response = await request(t.app.getHttpServer()).get('/health/ready');

    expect(response.status).toBe(503);
    expect(response.body).toEqual({
      status: 'error',
      info: {},
      error: { database: { status: 'down', message: 'unreachable' } },
      details: { database: { status: 'down', message: 'unreachable' } },
    });
    expectContractHeaders(response);
  });

  it('GET /health/live still answers 200: a restart would not bring the database back', async () => {
    expect((await request(t.app.getHttpServer()).get('/health/live')).status).toBe(200);
  });
});

describe('health, with Redis', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({
      env: { REDIS_URL: TEST_REDIS_URL },
      customize: useRedisKeyPrefix(TEST_REDIS_URL, uniqueKeyPrefix()),
    });
  });

  afterAll(async () => {
    await t.close();
  });

  it('GET /health/ready checks the database and Redis', async () => {
    const response = await request(t.app.getHttpServer()).get('/health/ready');

    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      status: 'ok',
      info: { database: UP, redis: UP },
      error: {},
      details: { database: UP, redis: UP },
    });
  });
});

describe('health, with Redis unreachable', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ env: { REDIS_URL: `redis://127.0.0.1:${await findFreePort()}` } });
  });

  afterAll(async () => {
    await t.close();
  });

  it('GET /health/ready answers 503 naming Redis, the database being up', async () => {
    const response = await request(t.app.getHttpServer()).get('/health/ready');

    expect(response.status).toBe(503);
    expect(response.body).toEqual({
      status: 'error',
      info: { database: UP },
      error: { redis: { status: 'down', message: 'unreachable' } },
      details: { database: UP, redis: { status: 'down', message: 'unreachable' } },
    });
    expectContractHeaders(response);
  });

  it('GET /health/live answers 200', async () => {
    expect((await request(t.app.getHttpServer()).get('/health/live')).status).toBe(200);
  });

  it('the API itself keeps answering, counting per instance (fail open)', async () => {
    const { key } = await createTenant(t.prisma);

    const response = await getWithKey(t.app, '/v1/me', key);

    expect(response.status).toBe(200);
    expect(response.headers['x-ratelimit-remaining']).toBe('119');
  });
});

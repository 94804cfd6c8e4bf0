import request from 'supertest';
import { generateApiKey } from '../../../src/auth/api-key';
import { createTestApp, type TestApp } from '../../support/app';

// Every request of these tests comes from 127.0.0.1: only X-Forwarded-For tells clients apart.
const LIMIT = 3;

/** A request that fails authentication, as if relayed for `forwardedFor` (if given). */
function failFrom(t: TestApp, forwardedFor?: string) {
  const call = request(t.app.getHttpServer())
    .get('/v1/me')
    .set('Authorization', `Bearer ${generateApiKey()}`);
  return forwardedFor === undefined ? call : call.set('X-Forwarded-For', forwardedFor);
}

async function useUpBudget(t: TestApp, forwardedFor?: string): Promise<void> {
  for (let i = 0; i < LIMIT; i++) expect((await failFrom(t, forwardedFor)).status).toBe(401);
  expect((await failFrom(t, forwardedFor)).status).toBe(429);
}

describe('TRUST_PROXY=loopback (a proxy on this host)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({
      env: { TRUST_PROXY: 'loopback', AUTH_FAILURE_LIMIT_PER_MINUTE: String(LIMIT) },
    });
  });

  afterAll(async () => {
    await t.close();
  });

  beforeEach(() => {
    t.clock.advance(60_000);
  });

  it('limits the client named by X-Forwarded-For, not the proxy', async () => {
    await useUpBudget(t, '203.0.113.7');

    expect((await failFrom(t, '203.0.113.8')).status).toBe(401);
    expect((await failFrom(t)).status).toBe(401);
    expect((await failFrom(t, '203.0.113.7')).status).toBe(429);
  });

  it('tracks the last address not added by a trusted proxy', async () => {
    await useUpBudget(t, '203.0.113.9');

    // A client may prepend anything; the address appended by the proxy (on loopback) counts.
    expect((await failFrom(t, '198.51.100.1, 203.0.113.9')).status).toBe(429);
    expect((await failFrom(t, '203.0.113.9, 198.51.100.2')).status).toBe(401);
  });
});

describe('TRUST_PROXY=1 (one proxy in front, as in docker-compose.yml)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({
      env: { TRUST_PROXY: '1', AUTH_FAILURE_LIMIT_PER_MINUTE: String(LIMIT) },
    });
  });

  afterAll(async () => {
    await t.close();
  });

  it('tracks the address the proxy appended, whatever the client prepended', async () => {
    await useUpBudget(t, '203.0.113.10');

    expect((await failFrom(t, '10.9.8.7, 203.0.113.10')).status).toBe(429);
    expect((await failFrom(t, '203.0.113.11')).status).toBe(401);
  });
});

describe('TRUST_PROXY unset', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ env: { AUTH_FAILURE_LIMIT_PER_MINUTE: String(LIMIT) } });
  });

  afterAll(async () => {
    await t.close();
  });

  it('ignores X-Forwarded-For: every client behind one address shares its budget', async () => {
    await useUpBudget(t, '203.0.113.7');

    expect((await failFrom(t, '203.0.113.8')).status).toBe(429);
    expect((await failFrom(t)).status).toBe(429);
  });
});

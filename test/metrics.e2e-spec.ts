import type { Server } from 'node:http';
import { Database } from '../src/database/database';
import { MAX_WAITING } from '../src/database/pool-config';
import { findFreePort } from '../src/dev/free-port';
import { METRIC_PREFIX, UNMATCHED_ROUTE } from '../src/metrics/api-metrics';
import { createTestApp, type TestApp } from './support/app';
import { createCompany } from './support/factories';
import { createTenant } from './support/http';
import { listenOnLoopback, send } from './support/raw-http';

/*
 * METRICS_PORT: a Prometheus scrape on a server of its own, whose counters move with the API's
 * requests, labelled by route template (never the path), method and status.
 */

const BAD_KEY = { authorization: 'Bearer st_live_not-a-key' };
// Low limits, so that both limiters refuse within a few requests.
const RATE_LIMIT = 3;
const AUTH_FAILURE_LIMIT = 2;

let t: TestApp;
let apiPort: number;
let metricsPort: number;
let key: string;
let companyId: string;

beforeAll(async () => {
  metricsPort = await findFreePort();
  t = await createTestApp({
    env: {
      METRICS_PORT: String(metricsPort),
      RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT),
      AUTH_FAILURE_LIMIT_PER_MINUTE: String(AUTH_FAILURE_LIMIT),
    },
  });
  apiPort = await listenOnLoopback(t.app);
  const tenant = await createTenant(t.prisma);
  key = tenant.key;
  companyId = (await createCompany(t.prisma, tenant.workspace.id)).id;
}, 60_000);

// A new minute for both limiters (the manual clock): each test starts with full budgets.
afterEach(() => t.clock.advance(60_000));

afterAll(async () => {
  await t?.close();
});

const api = (path: string, headers: Record<string, string> = {}) =>
  send(apiPort, path, { headers });
const withKey = (path: string) => api(path, { authorization: `Bearer ${key}` });

async function scrape(): Promise<string> {
  const response = await send(metricsPort, '/metrics');
  expect(response.status).toBe(200);
  expect(response.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  return response.text;
}

/** The value of the sample `name{labels}` (labels in any order), or undefined if absent. */
function valueOf(
  text: string,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const wanted = Object.entries(labels);
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== `${METRIC_PREFIX}${name}`) continue;
    const found = new Map(
      [...(match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]),
    );
    if (found.size === wanted.length && wanted.every(([k, v]) => found.get(k) === v)) {
      return Number(match[3]);
    }
  }
  return undefined;
}

/** How much each sample moved between two scrapes (absent before: from 0). */
function moved(before: string, after: string, name: string, labels: Record<string, string> = {}) {
  return (valueOf(after, name, labels) ?? NaN) - (valueOf(before, name, labels) ?? 0);
}

const requests = (route: string, status: string) => ({ route, method: 'GET', status });

describe('GET /metrics on METRICS_PORT', () => {
  it('counts and times requests by route template, method and status', async () => {
    const before = await scrape();
    expect((await withKey('/v1/companies?limit=10')).status).toBe(200);
    expect((await withKey(`/v1/companies/${companyId}`)).status).toBe(200);
    const after = await scrape();

    const list = requests('/v1/companies', '200');
    const item = requests('/v1/companies/:id', '200');
    expect(moved(before, after, 'http_requests_total', list)).toBe(1);
    expect(moved(before, after, 'http_requests_total', item)).toBe(1);
    expect(moved(before, after, 'http_request_duration_seconds_count', list)).toBe(1);
    expect(
      moved(before, after, 'http_request_duration_seconds_bucket', { ...list, le: '+Inf' }),
    ).toBe(1);
    expect(moved(before, after, 'http_request_duration_seconds_sum', list)).toBeGreaterThan(0);
    // The id is never a label: no series names it.
    expect(after).not.toContain(companyId);
  });

  it('counts every unknown path under one route label', async () => {
    const before = await scrape();
    expect((await api('/nowhere/1')).status).toBe(404);
    expect((await api('/nowhere/2?x=y')).status).toBe(404);
    const after = await scrape();
    expect(moved(before, after, 'http_requests_total', requests(UNMATCHED_ROUTE, '404'))).toBe(2);
    expect(after).not.toContain('nowhere');
  });

  it('counts authentication failures, and the refusals of the address limiter', async () => {
    const before = await scrape();
    for (let i = 0; i < AUTH_FAILURE_LIMIT; i++)
      expect((await api('/v1/me', BAD_KEY)).status).toBe(401);
    expect((await api('/v1/me', BAD_KEY)).status).toBe(429);
    const after = await scrape();
    expect(moved(before, after, 'authentication_failures_total')).toBe(AUTH_FAILURE_LIMIT);
    expect(moved(before, after, 'rate_limited_total', { limiter: 'auth_failure' })).toBe(1);
    expect(moved(before, after, 'http_requests_total', requests('/v1/me', '401'))).toBe(
      AUTH_FAILURE_LIMIT,
    );
    expect(moved(before, after, 'http_requests_total', requests('/v1/me', '429'))).toBe(1);
  });

  it("counts the refusals of the key's rate limit", async () => {
    const { key: fresh } = await createTenant(t.prisma);
    const before = await scrape();
    let status = 0;
    for (let i = 0; i <= RATE_LIMIT && status !== 429; i++) {
      status = (await api('/v1/me', { authorization: `Bearer ${fresh}` })).status;
    }
    expect(status).toBe(429);
    const after = await scrape();
    expect(moved(before, after, 'rate_limited_total', { limiter: 'api_key' })).toBe(1);
    expect(moved(before, after, 'authentication_failures_total')).toBe(0);
  });

  it('counts the requests shed because the pool is saturated', async () => {
    const database = t.app.get(Database);
    const before = await scrape();
    // No statement may wait: every one is refused as if the queue were full.
    database.maxWaiting = 0;
    try {
      const shed = await withKey('/v1/me');
      expect(shed.status).toBe(503);
      expect(shed.headers['retry-after']).toBe('1');
    } finally {
      database.maxWaiting = MAX_WAITING;
    }
    const after = await scrape();
    expect(moved(before, after, 'load_shed_total')).toBe(1);
    expect(moved(before, after, 'http_requests_total', requests('/v1/me', '503'))).toBe(1);
  });

  it("reads the database pool's gauges when scraped", async () => {
    const pool = t.app.get(Database).pool;
    expect((await withKey('/v1/me')).status).toBe(200);
    const text = await scrape();
    expect(valueOf(text, 'db_pool_connections')).toBe(pool.totalCount);
    expect(valueOf(text, 'db_pool_connections')).toBeGreaterThan(0);
    expect(valueOf(text, 'db_pool_idle_connections')).toBe(pool.idleCount);
    expect(valueOf(text, 'db_pool_waiting')).toBe(0);
  });

  it('has the process and event-loop metrics, with the prefix', async () => {
    const text = await scrape();
    for (const name of [
      'nodejs_eventloop_lag_seconds',
      'nodejs_eventloop_lag_p99_seconds',
      'process_cpu_user_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_heap_size_used_bytes',
    ]) {
      expect(valueOf(text, name)).toEqual(expect.any(Number));
    }
  });

  it('serves GET /metrics only', async () => {
    expect((await send(metricsPort, '/')).status).toBe(404);
    expect((await send(metricsPort, '/metrics/x')).status).toBe(404);
    const post = await send(metricsPort, '/metrics', { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET');
  });

  it("is not served on the API's port", async () => {
    const response = await api('/metrics');
    expect(response.status).toBe(404);
    expect(response.text).not.toContain(METRIC_PREFIX);
  });
});

/** Listening TCP servers of this process. */
const tcpServers = () =>
  process.getActiveResourcesInfo().filter((name) => name === 'TCPServerWrap').length;

describe('METRICS_PORT unset', () => {
  it('starts no listener and leaves the requests untimed', async () => {
    const servers = tcpServers();
    const off = await createTestApp({ database: t.database });
    try {
      expect(tcpServers()).toBe(servers);
      // One 'request' listener fewer than the app with metrics: the timing's.
      const listeners = (app: TestApp) =>
        (app.app.getHttpServer() as Server).listenerCount('request');
      expect(listeners(off)).toBe(listeners(t) - 1);
    } finally {
      await off.close();
    }
  });
});

describe('shutdown', () => {
  it('closes the metrics server with the application', async () => {
    const port = await findFreePort();
    const other = await createTestApp({
      database: t.database,
      env: { METRICS_PORT: String(port) },
    });
    expect((await send(port, '/metrics')).status).toBe(200);
    await other.close();
    await expect(send(port, '/metrics')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});

import type { Server } from 'node:http';
import { Client } from 'pg';
import { KeyUses } from '../../../src/auth/key-uses';
import { Database } from '../../../src/database/database';
import { BodyBudget } from '../../../src/items/body-budget';
import { MAX_WAITING } from '../../../src/database/pool-config';
import { PoolSaturatedError } from '../../../src/database/queryable';
import { findFreePort } from '../../../src/dev/free-port';
import { UNMATCHED_ROUTE } from '../../../src/metrics/api-metrics';
import { METRIC_PREFIX } from '../../../src/metrics/process-metrics';
import { createTestApp, type TestApp } from '../../support/app';
import { sampleValue } from '../../support/prometheus-text';
import { partsOf, readStream } from '../../support/change-stream';
import { createCompany, insertCompanies } from '../../support/factories';
import { createTenant } from '../../support/http';
import { listenOnLoopback, send } from '../../support/raw-http';

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

/** The value of the sample `name{labels}` of this service (its prefix added). */
const valueOf = (text: string, name: string, labels: Record<string, string> = {}) =>
  sampleValue(text, `${METRIC_PREFIX}${name}`, labels);

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

  it('counts the change streams: running, their changes and bytes, and how they ended', async () => {
    const { workspace, key: streamKey } = await createTenant(t.prisma);
    await insertCompanies(t.prisma, workspace.id, 150);
    const before = await scrape();
    expect(valueOf(before, 'change_streams_running')).toBe(0);
    // The stream's statements after its first page wait until it has been scraped running.
    const { fairQueue } = t.app.get(Database);
    const run = fairQueue.run.bind(fairQueue);
    let scraped!: () => void;
    const midway = new Promise<void>((resolve) => (scraped = resolve));
    let statements = 0;
    jest
      .spyOn(fairQueue, 'run')
      .mockImplementation((flow, task) =>
        flow === workspace.id && ++statements > 1
          ? run(flow, () => midway.then(task))
          : run(flow, task),
      );
    let runningMidway: number | undefined;
    const read = await readStream(apiPort, '/v1/companies/changes/stream', streamKey, {
      onLine: async (line) => {
        if ('cursor' in line && runningMidway === undefined) {
          runningMidway = valueOf(await scrape(), 'change_streams_running');
          scraped();
        }
      },
    });
    jest.restoreAllMocks();
    expect(partsOf(read.lines).last?.hasMore).toBe(false);
    await new Promise((resolve) => setImmediate(resolve));
    const after = await scrape();
    expect(runningMidway).toBe(1);
    expect(valueOf(after, 'change_streams_running')).toBe(0);
    expect(moved(before, after, 'change_stream_changes_total')).toBe(150);
    expect(moved(before, after, 'change_stream_bytes_total')).toBe(read.bytes);
    expect(moved(before, after, 'change_streams_ended_total', { reason: 'completed' })).toBe(1);
    // Workspaces are never a label.
    expect(after).not.toContain(workspace.id);
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
    // No key's use being written (auth/key-uses.ts): the next statement is the key check's.
    await t.app.get(KeyUses).written();
    // The key check's statement refused as a full pool queue refuses it (queryable.ts).
    jest.spyOn(database, 'query').mockRejectedValueOnce(new PoolSaturatedError(MAX_WAITING));
    const shed = await withKey('/v1/me');
    expect(shed.status).toBe(503);
    expect(shed.headers['retry-after']).toBe('1');
    const after = await scrape();
    expect(moved(before, after, 'load_shed_total')).toBe(1);
    expect(moved(before, after, 'http_requests_total', requests('/v1/me', '503'))).toBe(1);
  });

  it("reads the database pools' gauges when scraped", async () => {
    const database = t.app.get(Database);
    // A key check (the priority pool) and a list statement (the workspaces' pool).
    expect((await withKey('/v1/companies')).status).toBe(200);
    // The key's use is written after the answer (auth/key-uses.ts), on a priority connection: the
    // gauges and the pools are compared once it is back.
    await t.app.get(KeyUses).written();
    const text = await scrape();
    for (const [label, pool] of [
      ['statements', database.pool],
      ['priority', database.priorityPool],
    ] as const) {
      const labels = { pool: label };
      expect(valueOf(text, 'db_pool_connections', labels)).toBe(pool.totalCount);
      expect(valueOf(text, 'db_pool_connections', labels)).toBeGreaterThan(0);
      expect(valueOf(text, 'db_pool_idle_connections', labels)).toBe(pool.idleCount);
      expect(valueOf(text, 'db_pool_waiting', labels)).toBe(0);
    }
  });

  it('says the database is up, and how long a running transaction has held the feeds back', async () => {
    const text = await scrape();
    expect(valueOf(text, 'database_up')).toBe(1);
    expect(valueOf(text, 'change_feed_held_back_seconds')).toBe(0);
    const writer = new Client({ connectionString: t.database.url });
    await writer.connect();
    try {
      // A transaction that has a transaction id (as one that writes) and stays open, and one that
      // commits after it: the feeds cannot serve that one until the first ends.
      await writer.query('BEGIN');
      await writer.query('SELECT pg_current_xact_id()');
      await createCompany(t.prisma, (await createTenant(t.prisma)).workspace.id);
      // A scrape's reading serves the scrapes of the next second (scrape-reading.ts).
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      expect(valueOf(await scrape(), 'change_feed_held_back_seconds')).toBe(0);
      // 90 s later on the service's clock, the same transaction still holds the feeds.
      t.clock.advance(90_000);
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      expect(valueOf(await scrape(), 'change_feed_held_back_seconds')).toBe(90);
      await writer.query('COMMIT');
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      expect(valueOf(await scrape(), 'change_feed_held_back_seconds')).toBe(0);
    } finally {
      await writer.end();
    }
  });

  it('reads the heap that large response bodies hold when scraped: none between requests', async () => {
    const budget = t.app.get(BodyBudget);
    const held = jest.spyOn(budget, 'heldBytes', 'get').mockReturnValue(3 * 1024 * 1024);
    expect(valueOf(await scrape(), 'large_bodies_heap_bytes')).toBe(3 * 1024 * 1024);
    held.mockRestore();
    expect(valueOf(await scrape(), 'large_bodies_heap_bytes')).toBe(0);
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

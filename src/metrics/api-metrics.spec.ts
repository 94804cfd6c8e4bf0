import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { Pool } from 'pg';
import { FairQueue } from '../database/fair-queue';
import {
  RETRY_AFTER_SATURATED_SECONDS,
  RETRY_AFTER_UNAVAILABLE_SECONDS,
} from '../database/database-errors';
import { markRefusal } from '../logging/refusal-reason';
import { Registry } from 'prom-client';
import { ApiMetrics, routeOf, UNMATCHED_ROUTE } from './api-metrics';
import { METRIC_PREFIX, registerProcessMetrics } from './process-metrics';

/** A request as Express leaves it once routed (`route`), and its response with a status. */
function exchange(status: number, route?: string, headers: Record<string, string> = {}) {
  const request = Object.assign(new IncomingMessage(new Socket()), {
    method: 'GET',
    url: '/v1/companies/co_123',
    route: route === undefined ? undefined : { path: route },
  });
  const response = new ServerResponse(request);
  response.statusCode = status;
  for (const [name, value] of Object.entries(headers)) response.setHeader(name, value);
  return { request, response };
}

describe('routeOf', () => {
  it('is the template of the route matched, never the path', () => {
    expect(routeOf(exchange(200, '/v1/companies/:id').request)).toBe('/v1/companies/:id');
  });

  it.each([
    ['no route', undefined],
    ["only a middleware's wildcard mount", '{*path}'],
  ])('is one value for every request that matched %s', (_, route) => {
    expect(routeOf(exchange(404, route).request)).toBe(UNMATCHED_ROUTE);
  });
});

describe('ApiMetrics', () => {
  // Never connected: the gauges only read its counts.
  const pool = new Pool();
  afterAll(() => pool.end());
  const sources = () => ({
    pools: { statements: pool },
    fairQueue: new FairQueue({ seats: 2, deadlineMs: 1_000, maxWaiting: 10 }),
    requestsInFlight: () => 7,
  });

  async function valueOf(metrics: ApiMetrics, name: string): Promise<number> {
    const metric = await metrics.registry.getSingleMetric(`${METRIC_PREFIX}${name}`)?.get();
    return metric?.values.reduce((sum, { value }) => sum + value, 0) ?? NaN;
  }

  it('counts as shed only the 503s that say to retry after the pool saturation delay', async () => {
    const metrics = new ApiMetrics(sources());
    const shed = { 'Retry-After': String(RETRY_AFTER_SATURATED_SECONDS) };
    const down = { 'Retry-After': String(RETRY_AFTER_UNAVAILABLE_SECONDS) };
    for (const headers of [shed, down, {}]) {
      const { request, response } = exchange(503, '/v1/me', headers);
      metrics.record(request, response, 0.001);
    }
    expect(await valueOf(metrics, 'load_shed_total')).toBe(1);
    expect(await valueOf(metrics, 'http_requests_total')).toBe(3);
  });

  it('counts refusals by reason, with no workspace label', async () => {
    const metrics = new ApiMetrics(sources());
    const reasons = ['in_flight_limit', 'in_flight_limit', 'rate_limit', 'overload'] as const;
    for (const reason of reasons) {
      const { request, response } = exchange(reason === 'overload' ? 503 : 429, '/v1/companies');
      markRefusal(response, reason);
      metrics.record(request, response, 0.001);
    }
    const text = await metrics.registry.metrics();
    expect(text).toContain(`${METRIC_PREFIX}refusals_total{reason="in_flight_limit"} 2\n`);
    expect(text).toContain(`${METRIC_PREFIX}refusals_total{reason="rate_limit"} 1\n`);
    expect(text).toContain(`${METRIC_PREFIX}refusals_total{reason="overload"} 1\n`);
    expect(text).not.toMatch(/workspace\w*="/i);
    // The per-minute limiters' counter counts only theirs.
    expect(text).toContain(`${METRIC_PREFIX}rate_limited_total{limiter="auth_failure"} 1\n`);
    expect(text).not.toContain('limiter="api_key"');
  });

  it('reads the in-flight count and the fair queue when scraped', async () => {
    const text = await new ApiMetrics(sources()).registry.metrics();
    expect(text).toContain(`${METRIC_PREFIX}requests_in_flight 7\n`);
    expect(text).toContain(`${METRIC_PREFIX}db_pool_queue_waiting 0\n`);
    expect(text).toContain(`${METRIC_PREFIX}db_pool_queue_busy 0\n`);
  });

  it('reads the pool when scraped', async () => {
    const text = await new ApiMetrics(sources()).registry.metrics();
    expect(text).toContain(`${METRIC_PREFIX}db_pool_connections{pool="statements"} 0\n`);
    expect(text).toContain(`${METRIC_PREFIX}db_pool_waiting{pool="statements"} 0\n`);
  });

  it('counts each failure of the shared rate-limit store', async () => {
    const store: { observer?: { failed: () => void } } = {};
    const metrics = new ApiMetrics({ ...sources(), rateLimitStore: store });
    expect(await valueOf(metrics, 'rate_limit_store_failures_total')).toBe(0);
    store.observer?.failed();
    store.observer?.failed();
    expect(await valueOf(metrics, 'rate_limit_store_failures_total')).toBe(2);
  });

  it('reads the database at a scrape once for its gauges: up with its answer, down without', async () => {
    let answer = () => Promise.resolve(42);
    const read = jest.fn(() => answer());
    const metrics = new ApiMetrics({ ...sources(), feedHoldBackSeconds: read });
    expect(await valueOf(metrics, 'database_up')).toBe(1);
    expect(await valueOf(metrics, 'change_feed_held_back_seconds')).toBe(42);
    expect(read).toHaveBeenCalledTimes(1);
    answer = () => Promise.reject(new Error('connection refused'));
    await new Promise((resolve) => setTimeout(resolve, 1_050));
    expect(await valueOf(metrics, 'database_up')).toBe(0);
    // The last value read, while the database does not answer.
    expect(await valueOf(metrics, 'change_feed_held_back_seconds')).toBe(42);
  });
});

describe('registerProcessMetrics', () => {
  it("exports the container's memory limit beside the process metrics, when it has one", async () => {
    const limited = new Registry();
    registerProcessMetrics(limited, 268435456);
    const text = await limited.metrics();
    expect(text).toContain(`${METRIC_PREFIX}container_memory_limit_bytes 268435456\n`);
    expect(text).toContain(`${METRIC_PREFIX}process_resident_memory_bytes `);

    const unlimited = new Registry();
    registerProcessMetrics(unlimited, undefined);
    expect(await unlimited.metrics()).not.toContain('container_memory_limit_bytes');
  });
});

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Pool } from 'pg';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { FairQueue } from '../database/fair-queue';
import { RETRY_AFTER_SATURATED_SECONDS } from '../database/database-errors';
import { refusalOf } from '../logging/refusal-reason';

/** Every metric's name starts with it, prom-client's default ones included. */
export const METRIC_PREFIX = 'visitor_api_';

/** The route label of a request that matched no route: one value, whatever its path. */
export const UNMATCHED_ROUTE = 'unmatched';

/*
 * Seconds. Measured under load (docs/benchmarks.md): /v1/me and the health probes answer in 2 to 6
 * ms at the median, list pages in 20 to 130 ms, a feed page of 1,000 changes in about 55 ms, a
 * deep page in 100 to 500 ms; a statement is cut at 5 s (STATEMENT_TIMEOUT_MS) and a connection
 * waited for at most 1 s (CONNECTION_WAIT_MS). Hence fine buckets below 10 ms for the key-only
 * routes, 60 and 150 ms at the feed's and the deep pages' targets, and nothing past 5 s.
 */
export const DURATION_BUCKETS = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.06, 0.1, 0.15, 0.25, 0.5, 1, 2.5, 5,
];

/*
 * Seconds a statement waited for its turn in the fair queue: none when a seat was free (the usual
 * case), up to QUEUE_DEADLINE_MS (5 s by default) under a burst.
 */
export const QUEUE_WAIT_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** What the metrics read of the capacity limits, at scrape time. */
export interface CapacitySources {
  pool: Pool;
  fairQueue: FairQueue;
  /** Requests in progress, every workspace together (never one series per workspace). */
  requestsInFlight: () => number;
}

/** What Express and the key guard add to the request by the time its response is finished. */
type RoutedRequest = IncomingMessage & { route?: { path?: unknown }; auth?: unknown };

// What a refused request's Retry-After says of a 503 (AllExceptionsFilter): "1" for a request shed
// because the pool was saturated, more for a database that is down.
const SHED_RETRY_AFTER = String(RETRY_AFTER_SATURATED_SECONDS);

/**
 * The service's metrics, in a registry of their own (so that two applications in one process, as
 * in the tests, do not share counters). Everything is read from the finished response: nothing on
 * the request path but `record`.
 */
export class ApiMetrics {
  readonly registry = new Registry();

  private readonly requests = new Counter({
    name: `${METRIC_PREFIX}http_requests_total`,
    help: 'HTTP requests answered, by route template, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [this.registry],
  });

  private readonly durations = new Histogram({
    name: `${METRIC_PREFIX}http_request_duration_seconds`,
    help: 'Time from the request to the end of its response, by route template, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });

  private readonly rateLimited = new Counter({
    name: `${METRIC_PREFIX}rate_limited_total`,
    help: 'Requests refused with 429, by limiter: api_key (per key) or auth_failure (per address)',
    labelNames: ['limiter'] as const,
    registers: [this.registry],
  });

  private readonly authFailures = new Counter({
    name: `${METRIC_PREFIX}authentication_failures_total`,
    help: 'Requests refused with 401: no key, a malformed one or an unknown one',
    registers: [this.registry],
  });

  private readonly loadShed = new Counter({
    name: `${METRIC_PREFIX}load_shed_total`,
    help: 'Requests answered 503 because the database pool was saturated (Retry-After: 1)',
    registers: [this.registry],
  });

  private readonly refusals = new Counter({
    name: `${METRIC_PREFIX}refusals_total`,
    help:
      'Requests refused for capacity, by reason: in_flight_limit (429, the workspace has too many ' +
      'in progress), rate_limit (429, per-minute budget), overload (503, the service shed load)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  private readonly queueWait = new Histogram({
    name: `${METRIC_PREFIX}db_queue_wait_seconds`,
    help: "Time a workspace's statement waited for its turn at a connection in the fair queue",
    buckets: QUEUE_WAIT_BUCKETS,
    registers: [this.registry],
  });

  constructor({ pool, fairQueue, requestsInFlight }: CapacitySources) {
    // Event-loop lag, heap, GC, CPU, memory, file descriptors, all computed at scrape time.
    collectDefaultMetrics({ register: this.registry, prefix: METRIC_PREFIX });
    // Read from the pool when scraped: no timer, nothing per request.
    const gauges = [
      ['connections', 'Connections open in the pool, busy or idle', () => pool.totalCount],
      ['idle_connections', 'Connections open and idle in the pool', () => pool.idleCount],
      ['waiting', 'Statements waiting for a connection', () => pool.waitingCount],
      ['queue_waiting', 'Statements waiting in the fair queue', () => fairQueue.waiting],
      ['queue_busy', 'Seats of the fair queue taken by running statements', () => fairQueue.busy],
    ] as const;
    for (const [name, help, read] of gauges) {
      new Gauge({
        name: `${METRIC_PREFIX}db_pool_${name}`,
        help,
        registers: [this.registry],
        collect() {
          this.set(read());
        },
      });
    }
    new Gauge({
      name: `${METRIC_PREFIX}requests_in_flight`,
      help: 'Authenticated requests in progress, every workspace together',
      registers: [this.registry],
      collect() {
        this.set(requestsInFlight());
      },
    });
    fairQueue.observer = { waited: (ms) => this.queueWait.observe(ms / 1000) };
  }

  /** Counts one answered request; `seconds` is from its arrival to the end of its response. */
  record(request: RoutedRequest, response: ServerResponse, seconds: number): void {
    const status = response.statusCode;
    const labels = { route: routeOf(request), method: request.method ?? '', status };
    this.requests.inc(labels);
    this.durations.observe(labels, seconds);
    const refusal = refusalOf(response);
    if (status === 401) this.authFailures.inc();
    // The key's limiter runs once the key is accepted (request.auth set), the address's limiter
    // only on a failed key: which one refused is known from the request alone. The in-flight
    // limit's 429 is not a rate limit's: refusals_total counts it.
    else if (status === 429 && refusal !== 'in_flight_limit')
      this.rateLimited.inc({ limiter: request.auth ? 'api_key' : 'auth_failure' });
    else if (status === 503 && response.getHeader('retry-after') === SHED_RETRY_AFTER) {
      this.loadShed.inc();
    }
    if (refusal !== undefined) this.refusals.inc({ reason: refusal });
  }
}

/**
 * The route template Express matched (`/v1/companies/:id`), never the path itself, whose values
 * would make a series per id. A request that matched no endpoint is UNMATCHED_ROUTE: then the
 * route Express last matched is a middleware's wildcard mount (the request log's `{*path}`), and no
 * endpoint of the API has a wildcard. The method needs no such bound: Node's parser refuses every
 * method outside its fixed list.
 */
export function routeOf(request: RoutedRequest): string {
  const path = request.route?.path;
  return typeof path === 'string' && !path.includes('*') ? path : UNMATCHED_ROUTE;
}

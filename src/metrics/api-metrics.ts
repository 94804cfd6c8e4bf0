import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Pool } from 'pg';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ChangeStreams } from '../changes/stream/change-streams';
import type { FairQueue } from '../database/fair-queue';
import { RETRY_AFTER_SATURATED_SECONDS } from '../database/database-errors';
import { LARGE_BODIES_HEAP_BYTES } from '../items/body-budget';
import { refusalOf } from '../logging/refusal-reason';
import { METRIC_PREFIX, registerProcessMetrics, registerReadingGauges } from './process-metrics';

/** The route label of a request that matched no route: one value, whatever its path. */
export const UNMATCHED_ROUTE = 'unmatched';

/*
 * Seconds. Measured under load (docs/benchmarks.md, "Results"): /v1/me and the health probes answer
 * in 2 to 6 ms at the median, list pages in 20 to 130 ms, a feed page of 1,000 changes in about 55
 * ms, a deep page in 100 to 500 ms; a statement is cut at 5 s (STATEMENT_TIMEOUT_MS) and a
 * connection waited for at most 1 s (CONNECTION_WAIT_MS). Hence fine buckets below 10 ms for the
 * key-only routes, 60 and 150 ms at the feed's and the deep pages' targets, and nothing past 5 s.
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
  /** The primary's pools by name, the `pool` label of their gauges. */
  pools: Record<string, Pool>;
  fairQueue: FairQueue;
  /** Requests in progress, every workspace together (never one series per workspace). */
  requestsInFlight: () => number;
  /** The change streams: how many run, and what they send (every workspace together). */
  changeStreams?: Pick<ChangeStreams, 'running' | 'observer'>;
  /** Heap reserved for large response bodies (body-budget.ts), against its bound. */
  largeBodiesHeapBytes?: () => number;
  /**
   * One statement on the primary at each scrape: how long the change feeds have been held back
   * (feed-hold-back.ts). Its answer within 2 s is also `database_up`.
   */
  feedHoldBackSeconds?: () => Promise<number>;
  /** The shared rate-limit store's failures (each request that counted locally instead). */
  rateLimitStore?: { observer?: { failed: () => void } };
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
      'in progress), stream_limit (429, the workspace has too many change streams running), ' +
      'rate_limit (429, per-minute budget), overload (503, the service shed load)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  private readonly queueWait = new Histogram({
    name: `${METRIC_PREFIX}db_queue_wait_seconds`,
    help: "Time a workspace's statement waited for its turn at a connection in the fair queue",
    buckets: QUEUE_WAIT_BUCKETS,
    registers: [this.registry],
  });

  private readonly streamChanges = new Counter({
    name: `${METRIC_PREFIX}change_stream_changes_total`,
    help: 'Changes sent by change streams',
    registers: [this.registry],
  });

  private readonly streamBytes = new Counter({
    name: `${METRIC_PREFIX}change_stream_bytes_total`,
    help: 'Bytes of NDJSON sent by change streams, before compression',
    registers: [this.registry],
  });

  private readonly streamsEnded = new Counter({
    name: `${METRIC_PREFIX}change_streams_ended_total`,
    help:
      'Change streams ended, by how: completed (caught up), held_back (by an older transaction), ' +
      'time_limit, shutdown, error (these with their last line), client_gone, stalled (cut)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  constructor({
    pools,
    fairQueue,
    requestsInFlight,
    changeStreams,
    largeBodiesHeapBytes,
    feedHoldBackSeconds,
    rateLimitStore,
  }: CapacitySources) {
    registerProcessMetrics(this.registry);
    this.registerPoolGauges(pools, fairQueue);
    this.registerGauge(
      'requests_in_flight',
      'Authenticated requests in progress, every workspace together',
      requestsInFlight,
    );
    fairQueue.observer = { waited: (ms) => this.queueWait.observe(ms / 1000) };
    if (feedHoldBackSeconds !== undefined) this.registerFeedHoldBack(feedHoldBackSeconds);
    if (rateLimitStore !== undefined) this.countRateLimitStoreFailures(rateLimitStore);
    if (largeBodiesHeapBytes !== undefined) {
      this.registerGauge(
        'large_bodies_heap_bytes',
        'Heap reserved for response bodies over 1 MiB: at most ' +
          `${LARGE_BODIES_HEAP_BYTES} bytes, or one larger body alone`,
        largeBodiesHeapBytes,
      );
    }
    if (changeStreams !== undefined) this.observeChangeStreams(changeStreams);
  }

  /** A gauge read when scraped: no timer, nothing per request. */
  private registerGauge(name: string, help: string, read: () => number): void {
    new Gauge({
      name: `${METRIC_PREFIX}${name}`,
      help,
      registers: [this.registry],
      collect() {
        this.set(read());
      },
    });
  }

  /** The pools' connections and waiting statements, by pool, and the fair queue's seats. */
  private registerPoolGauges(pools: Record<string, Pool>, fairQueue: FairQueue): void {
    const poolGauges = [
      [
        'connections',
        'Connections open in the pool, busy or idle',
        (pool: Pool) => pool.totalCount,
      ],
      ['idle_connections', 'Connections open and idle in the pool', (pool: Pool) => pool.idleCount],
      [
        'waiting',
        'Statements waiting for a connection of the pool',
        (pool: Pool) => pool.waitingCount,
      ],
    ] as const;
    for (const [name, help, read] of poolGauges) {
      new Gauge({
        name: `${METRIC_PREFIX}db_pool_${name}`,
        help: `${help}, by pool: statements (the workspaces') or priority (key checks, readiness)`,
        labelNames: ['pool'] as const,
        registers: [this.registry],
        collect() {
          for (const [label, pool] of Object.entries(pools)) this.set({ pool: label }, read(pool));
        },
      });
    }
    this.registerGauge(
      'db_pool_queue_waiting',
      'Statements waiting in the fair queue',
      () => fairQueue.waiting,
    );
    this.registerGauge(
      'db_pool_queue_busy',
      'Seats of the fair queue taken by running statements',
      () => fairQueue.busy,
    );
  }

  /** `database_up` and the feeds' hold-back, from one statement per scrape. */
  private registerFeedHoldBack(feedHoldBackSeconds: () => Promise<number>): void {
    registerReadingGauges(
      this.registry,
      feedHoldBackSeconds,
      'Whether the primary answered a statement within 2 s at this scrape (1) or not (0)',
      [
        {
          name: 'change_feed_held_back_seconds',
          help:
            'How long one running transaction has held back the change feeds, as seen at the ' +
            'scrapes (0 when none does)',
          value: (seconds) => seconds,
        },
      ],
    );
  }

  private countRateLimitStoreFailures(store: NonNullable<CapacitySources['rateLimitStore']>): void {
    const failures = new Counter({
      name: `${METRIC_PREFIX}rate_limit_store_failures_total`,
      help: 'Requests counted by this instance alone because the shared store (Redis) failed',
      registers: [this.registry],
    });
    store.observer = { failed: () => failures.inc() };
  }

  /** How many streams run (read when scraped), and what they send and how they end (told). */
  private observeChangeStreams(changeStreams: NonNullable<CapacitySources['changeStreams']>): void {
    this.registerGauge(
      'change_streams_running',
      'Change streams running, every workspace together',
      () => changeStreams.running,
    );
    changeStreams.observer = {
      sent: (changes, bytes) => {
        this.streamChanges.inc(changes);
        this.streamBytes.inc(bytes);
      },
      ended: (reason) => this.streamsEnded.inc({ reason }),
    };
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
    // only on a failed key: which one refused is known from the request alone. The in-flight and
    // stream limits' 429s are not a rate limit's: refusals_total counts them.
    else if (status === 429 && refusal === 'rate_limit')
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

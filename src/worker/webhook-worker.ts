import type { OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import PgBoss from 'pg-boss';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { Clock } from '../common/clock';
import { Environment } from '../config/environment';
import { DEFAULT_TIMEOUT_MS } from './delivery/send-webhook';
import { DeliverySlots, SLOW_ATTEMPT_MS } from './delivery-slots';
import { type DeliveryOptions, type FetchedJob, WebhookDelivery } from './webhook-delivery';
import { WebhookDispatcher } from './webhook-dispatcher';
import { DELIVERY_QUEUE, type DeliveryJob } from './webhook-queue';
import { RetryPacing } from './retry-pacing';

export interface WebhookWorkerOptions {
  /**
   * The dispatcher's and the deliveries' statements: the process's Database pool (worker.module.ts),
   * with the service's session settings (UTC, exact scores in the events' items), sent at connection
   * or carried by the role behind PgBouncer. Its owner closes it, after stop().
   */
  pool: Pool;
  /** pg-boss's own connections. */
  databaseUrl: string;
  secretKey: Buffer;
  allowPrivateNetworks: boolean;
  allowHttp: boolean;
  logger: Logger;
  /** An attempt's whole time (the spec's 15 s); tests shorten it. */
  timeoutMs?: number;
  clock?: Clock;
  random?: () => number;
  /** How often the dispatcher looks for new changes when it found none. */
  dispatchIntervalMs?: number;
  /** See DeliveryOptions.maxJobWaitSeconds. */
  maxJobWaitSeconds?: number;
  /** Attempts in flight in the worker, every endpoint together. */
  capacity?: number;
  /** Attempts in flight for one endpoint: its share of the capacity. */
  perEndpoint?: number;
  /** Jobs fetched at a time. */
  batchSize?: number;
  /** VISIT_RETENTION_DAYS: a visit event is never made for a visit past it. Default its default. */
  visitRetentionDays?: number;
  /** Each attempt once recorded (the metrics: worker-metrics.ts). */
  onRecorded?: DeliveryOptions['onRecorded'];
}

// Up to 200 jobs held per worker (docs/benchmarks.md, "Webhooks"), and at most 50 attempts in
// flight for one endpoint (a quarter): an endpoint that hangs holds 50 for up to an attempt's
// timeout, and the other 150 go on. Measured with one endpoint taking 600 events a second beside
// workload (a): with 20 per endpoint, commit to delivery p50 861 ms, p99 1,399 ms, a backlog
// drained at 1,186/s; with 50, 305 ms, 723 ms and 1,912/s, as fast as with no share per endpoint at
// all.
const DEFAULT_DISPATCH_INTERVAL_MS = 200;
const DEFAULT_CAPACITY = 200;
const DEFAULT_PER_ENDPOINT = 50;
const DEFAULT_BATCH_SIZE = 50;
// How often the worker asks for jobs when it found none. It also wakes at once when this process
// dispatches, and when a place frees up while jobs were left.
const POLLING_INTERVAL_MS = 500;
const MAX_JOB_WAIT_SECONDS = 24 * 60 * 60;
const STOP_TIMEOUT_MS = 30_000;
const MAX_WARNED_REFUSALS = 10_000;
// While the database is away, a failing step waits from 200 ms (the dispatch interval), doubling,
// up to 30 s between tries (retry-pacing.ts).
const RETRY_BASE_MS = 200;
const RETRY_MAX_MS = 30_000;

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '(not a URL)';
  }
}

/**
 * The worker process's work: a dispatcher turning changes into events and jobs, and a fetch loop
 * taking the jobs (pg-boss) while there are places for their attempts, each endpoint within its
 * share (DeliverySlots). Any number of workers may run against one database.
 */
export class WebhookWorker implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly pool: Pool;
  private readonly boss: PgBoss;
  private readonly dispatcher: WebhookDispatcher;
  private readonly delivery: WebhookDelivery;
  private readonly slots: DeliverySlots<FetchedJob>;
  private readonly accepting = new Set<Promise<void>>();
  /** The endpoint and reason of each refusal logged (warnRefused). */
  private readonly warnedRefusals = new Set<string>();
  private dispatchTimer?: NodeJS.Timeout;
  private dispatching?: Promise<void>;
  private fetching?: Promise<void>;
  private wakeFetch?: () => void;
  private started = false;
  private stopped = false;
  private readonly dispatchRetries: RetryPacing;
  private readonly fetchRetries: RetryPacing;
  private readonly deferRetries: RetryPacing;
  private readonly bossErrors: RetryPacing;

  constructor(private readonly options: WebhookWorkerOptions) {
    this.pool = options.pool;
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const leaseMs = 2 * timeoutMs;
    this.boss = new PgBoss({
      connectionString: options.databaseUrl,
      max: 4,
      schedule: false,
      // Expired jobs (their worker died) are found and retried at this pace: one lease.
      maintenanceIntervalSeconds: Math.max(1, Math.ceil(leaseMs / 1000)),
    });
    const clock = options.clock ?? new Clock();
    const retries = (step: string) =>
      new RetryPacing(step, options.logger, {
        baseMs: RETRY_BASE_MS,
        maxMs: RETRY_MAX_MS,
        now: () => clock.now(),
        random: options.random ?? Math.random,
      });
    this.dispatchRetries = retries('webhook dispatch');
    this.fetchRetries = retries('fetching webhook jobs');
    this.deferRetries = retries('putting webhook jobs back');
    // pg-boss's own maintenance, on its own schedule: paced in the log only.
    this.bossErrors = retries('pg-boss maintenance');
    this.boss.on('error', (error) => void this.bossErrors.failed(error));
    this.slots = new DeliverySlots<FetchedJob>(
      options.capacity ?? DEFAULT_CAPACITY,
      options.perEndpoint ?? DEFAULT_PER_ENDPOINT,
    );
    // A failure to record leaves its job active: pg-boss retries it once it expires (a retry of a
    // delivered event sends nothing).
    const onError = (error: unknown) =>
      options.logger.error({ err: error }, 'recording a webhook attempt failed');
    this.delivery = new WebhookDelivery(this.pool, this.boss, this.slots, onError, {
      send: {
        allowPrivateNetworks: options.allowPrivateNetworks,
        allowHttp: options.allowHttp,
        timeoutMs,
      },
      secretKey: options.secretKey,
      clock,
      random: options.random ?? Math.random,
      maxJobWaitSeconds: options.maxJobWaitSeconds ?? MAX_JOB_WAIT_SECONDS,
      onRefused: (endpointId, url, reason) => this.warnRefused(endpointId, url, reason),
      onRecorded: options.onRecorded,
    });
    this.dispatcher = new WebhookDispatcher(
      this.pool,
      this.boss,
      clock,
      this.delivery.leaseMs,
      options.visitRetentionDays ?? new Environment().VISIT_RETENTION_DAYS,
    );
  }

  /**
   * An attempt the worker refused to make (an address inside, a scheme not allowed): at warn, once
   * per endpoint and reason for the life of the process, since every retry would say it again.
   * Its host only: a URL's query may hold a receiver's token; the signing secret is never logged.
   */
  private warnRefused(endpointId: string, url: string, reason: string): void {
    const key = `${endpointId} ${reason}`;
    if (this.warnedRefusals.has(key)) return;
    // Bounded: a process that met many such endpoints starts over rather than grow.
    if (this.warnedRefusals.size >= MAX_WARNED_REFUSALS) this.warnedRefusals.clear();
    this.warnedRefusals.add(key);
    this.options.logger.warn(
      { endpointId, host: hostOf(url) },
      `webhook attempt not made: ${reason} (webhook deliveries --id ${endpointId})`,
    );
  }

  /** Started, and not stopping: it takes jobs (the readiness probe, worker-probes.ts). */
  get running(): boolean {
    return this.started && !this.stopped;
  }

  /** In the worker process, once its context is up (worker.module.ts). */
  onApplicationBootstrap(): Promise<void> {
    return this.start();
  }

  /** When the context closes (SIGTERM), before the database's pools do. */
  onModuleDestroy(): Promise<void> {
    return this.stop();
  }

  async start(): Promise<void> {
    await this.boss.start();
    // createQueue is idempotent in pg-boss 10 (a queue that exists is left as is).
    await this.boss.createQueue(DELIVERY_QUEUE);
    this.fetching = this.fetchLoop();
    this.scheduleDispatch(0);
    this.started = true;
    this.options.logger.info(
      `webhook worker started (${this.slots.capacity} attempts in flight at most, ` +
        `${this.slots.perEndpoint} per endpoint)`,
    );
  }

  /**
   * SIGTERM: no new dispatch and no new job; the attempts in flight finish and are recorded, then
   * pg-boss's connections close (the pool is its owner's).
   */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.dispatchTimer);
    this.wakeFetch?.();
    await this.dispatching;
    await this.fetching;
    await Promise.allSettled(this.accepting);
    await this.delivery.drain();
    await this.boss.stop({ graceful: true, wait: true, close: true, timeout: STOP_TIMEOUT_MS });
    this.options.logger.info('webhook worker stopped');
  }

  /**
   * Takes jobs while there are places for their attempts (pg-boss's fetch; a fetched job is
   * active until its attempt is recorded and the job completed, or, if this process dies, until
   * it expires and pg-boss hands it out again). The attempts run on their own: a slow one holds its
   * place, never the loop.
   */
  private async fetchLoop(): Promise<void> {
    const batchSize = this.options.batchSize ?? DEFAULT_BATCH_SIZE;
    while (!this.stopped) {
      let retryInMs = 0;
      try {
        await this.delivery.deferWaitingOfSlowEndpoints();
        this.deferRetries.succeeded();
      } catch (error) {
        retryInMs = this.deferRetries.failed(error);
      }
      const room = Math.min(this.slots.room, batchSize);
      if (room === 0) {
        // Woken when a place frees up, and often enough to see an endpoint become slow.
        await Promise.race([this.slots.freed(), this.nap(SLOW_ATTEMPT_MS / 4)]);
        continue;
      }
      this.slots.hold(room);
      let jobs: PgBoss.Job<DeliveryJob>[] = [];
      try {
        jobs = await this.boss.fetch<DeliveryJob>(DELIVERY_QUEUE, { batchSize: room });
        this.fetchRetries.succeeded();
        this.bossErrors.succeeded();
      } catch (error) {
        retryInMs = Math.max(retryInMs, this.fetchRetries.failed(error));
      }
      this.slots.release(room - jobs.length);
      if (jobs.length === 0) {
        await this.nap(Math.max(retryInMs, POLLING_INTERVAL_MS));
        continue;
      }
      // Its jobs stay active if this fails, and are retried once they expire.
      const accepted = this.delivery
        .accept(jobs.map((job) => ({ id: job.id, eventId: job.data.eventId })))
        .catch((error: unknown) =>
          this.options.logger.error({ err: error }, 'taking webhook jobs failed'),
        );
      this.accepting.add(accepted);
      void accepted.finally(() => this.accepting.delete(accepted));
    }
  }

  /** Waits `ms`, or less if woken (dispatch queued jobs, or the worker stops). */
  private nap(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      this.wakeFetch = done;
      function done() {
        clearTimeout(timer);
        resolve();
      }
    });
  }

  private scheduleDispatch(delayMs: number): void {
    if (this.stopped) return;
    this.dispatchTimer = setTimeout(() => {
      this.dispatching = this.dispatchOnce();
    }, delayMs);
  }

  private async dispatchOnce(): Promise<void> {
    let work = 0;
    let retryInMs = 0;
    try {
      work = await this.dispatcher.dispatchAll();
      this.dispatchRetries.succeeded();
      // The jobs just queued are taken now, not at the next poll.
      if (work > 0) this.wakeFetch?.();
    } catch (error) {
      retryInMs = this.dispatchRetries.failed(error);
    }
    const interval = this.options.dispatchIntervalMs ?? DEFAULT_DISPATCH_INTERVAL_MS;
    this.scheduleDispatch(work > 0 ? 0 : Math.max(retryInMs, interval));
  }
}

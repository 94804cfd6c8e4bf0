import PgBoss from 'pg-boss';
import { Pool } from 'pg';
import type { Logger } from 'pino';
import { Clock } from '../common/clock';
import { startupOptions, type SessionSettingsSource } from '../database/pool-config';
import { DEFAULT_TIMEOUT_MS } from '../webhooks/delivery/send-webhook';
import { WebhookDelivery } from '../webhooks/webhook-delivery';
import { WebhookDispatcher } from '../webhooks/webhook-dispatcher';
import { DELIVERY_QUEUE, type DeliveryJob } from '../webhooks/webhook-queue';

export interface WebhookWorkerOptions {
  databaseUrl: string;
  /**
   * 'role' behind PgBouncer (DATABASE_POOLER=pgbouncer), as for the server: no startup parameters,
   * which PgBouncer refuses (with them, no connection opened and nothing was delivered).
   */
  sessionSettings?: SessionSettingsSource;
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
  /** Delivery loops, each taking a batch of jobs at a time. */
  concurrency?: number;
  batchSize?: number;
}

// 8 loops of 25: up to 200 attempts in flight per worker (docs/benchmarks.md, (w)).
const DEFAULT_DISPATCH_INTERVAL_MS = 200;
const DEFAULT_CONCURRENCY = 8;
const DEFAULT_BATCH_SIZE = 25;
// pg-boss's shortest polling interval. A loop also wakes at once when this process dispatches.
const POLLING_INTERVAL_SECONDS = 0.5;
const MAX_JOB_WAIT_SECONDS = 24 * 60 * 60;
const STOP_TIMEOUT_MS = 30_000;

/**
 * The worker process's work: a dispatcher turning changes into events and jobs, and delivery
 * loops taking the jobs (pg-boss). Any number of workers may run against one database.
 */
export class WebhookWorker {
  private readonly pool: Pool;
  private readonly boss: PgBoss;
  private readonly dispatcher: WebhookDispatcher;
  private readonly delivery: WebhookDelivery;
  private readonly workIds: string[] = [];
  private dispatchTimer?: NodeJS.Timeout;
  private dispatching?: Promise<void>;
  private stopped = false;

  constructor(private readonly options: WebhookWorkerOptions) {
    const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
    // Statements are short; a connection per delivery loop and two for the dispatcher and pg-boss's
    // own bookkeeping. Waiting for one is not an error here (there is no client to shed).
    // The service's session settings (UTC, exact scores in the events' items), sent here or
    // carried by the role.
    this.pool = new Pool({
      connectionString: options.databaseUrl,
      max: concurrency + 2,
      ...(options.sessionSettings !== 'role' && { options: startupOptions() }),
    });
    this.pool.on('error', (error) => options.logger.warn(`idle connection lost: ${error.message}`));
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const leaseMs = 2 * timeoutMs;
    this.boss = new PgBoss({
      connectionString: options.databaseUrl,
      max: 4,
      schedule: false,
      // Expired jobs (their worker died) are found and retried at this pace: one lease.
      maintenanceIntervalSeconds: Math.max(1, Math.ceil(leaseMs / 1000)),
    });
    this.boss.on('error', (error) => options.logger.error({ err: error }, 'pg-boss error'));
    const clock = options.clock ?? new Clock();
    this.delivery = new WebhookDelivery(this.pool, this.boss, {
      send: {
        allowPrivateNetworks: options.allowPrivateNetworks,
        allowHttp: options.allowHttp,
        timeoutMs,
      },
      secretKey: options.secretKey,
      clock,
      random: options.random ?? Math.random,
      maxJobWaitSeconds: options.maxJobWaitSeconds ?? MAX_JOB_WAIT_SECONDS,
    });
    this.dispatcher = new WebhookDispatcher(this.pool, this.boss, clock, this.delivery.leaseMs);
  }

  async start(): Promise<void> {
    await this.boss.start();
    // createQueue is idempotent in pg-boss 10 (a queue that exists is left as is).
    await this.boss.createQueue(DELIVERY_QUEUE);
    const concurrency = this.options.concurrency ?? DEFAULT_CONCURRENCY;
    const batchSize = this.options.batchSize ?? DEFAULT_BATCH_SIZE;
    for (let i = 0; i < concurrency; i++) {
      let id = '';
      id = await this.boss.work<DeliveryJob>(
        DELIVERY_QUEUE,
        { batchSize, pollingIntervalSeconds: POLLING_INTERVAL_SECONDS },
        async (jobs) => {
          await this.deliverAll(jobs);
          // pg-boss 10 waits out the polling interval after every batch, even a full one: a
          // loop whose batch was full asks again at once (it was capped at batchSize / 0.5 s).
          if (jobs.length === batchSize) this.boss.notifyWorker(id);
        },
      );
      this.workIds.push(id);
    }
    this.scheduleDispatch(0);
    this.options.logger.info(`webhook worker started (${concurrency} delivery loops)`);
  }

  /**
   * SIGTERM: no new dispatch and no new job; the attempts in flight finish and are recorded
   * (pg-boss waits for its handlers), then the connections close.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.dispatchTimer);
    await this.dispatching;
    await this.boss.stop({ graceful: true, wait: true, close: true, timeout: STOP_TIMEOUT_MS });
    await this.pool.end();
    this.options.logger.info('webhook worker stopped');
  }

  // A failure to record fails the batch, whose jobs pg-boss then retries (a retry of a delivered
  // event sends nothing).
  private deliverAll(jobs: PgBoss.Job<DeliveryJob>[]): Promise<void> {
    return this.delivery.deliver(jobs.map((job) => job.data.eventId));
  }

  private scheduleDispatch(delayMs: number): void {
    if (this.stopped) return;
    this.dispatchTimer = setTimeout(() => {
      this.dispatching = this.dispatchOnce();
    }, delayMs);
  }

  private async dispatchOnce(): Promise<void> {
    let work = 0;
    try {
      work = await this.dispatcher.dispatchAll();
      // The jobs just queued are taken now, not at the loops' next poll.
      if (work > 0) for (const id of this.workIds) this.boss.notifyWorker(id);
    } catch (error) {
      this.options.logger.error({ err: error }, 'webhook dispatch failed; retrying');
    }
    this.scheduleDispatch(
      work > 0 ? 0 : (this.options.dispatchIntervalMs ?? DEFAULT_DISPATCH_INTERVAL_MS),
    );
  }
}

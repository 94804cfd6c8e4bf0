import { SpanStatusCode, trace } from '@opentelemetry/api';
import type PgBoss from 'pg-boss';
import type { Pool } from 'pg';
import type { Clock } from '../common/clock';
import { retryDelayMs } from './delivery/retry-schedule';
import { signingKeyOf } from '../webhooks/signing-secret';
import { sendWebhook } from './delivery/send-webhook';
import type { AttemptOutcome, SendOptions } from './delivery/webhook-attempt';
import { Batcher } from './batcher';
import type { DeliverySlots } from './delivery-slots';
import { openSecret } from '../webhooks/secret-box';
import { DELIVERY_QUEUE, inTransaction, jobOptions } from './webhook-queue';
import {
  claimEvents,
  type ClaimedEvent,
  disableEndpoint,
  endpointFailed,
  endpointsOfEvents,
  eventStatus,
  pauseEvent,
  recordAttempt,
  recordDelivered,
  settleEvent,
} from './sql/delivery.sql';

// Each attempt's span; a no-op tracer while tracing is off (src/tracing).
const tracer = trace.getTracer('visitor-read-api-webhook-worker');

/** An endpoint whose every attempt failed for this long is disabled. */
export const FAILING_LIMIT_MS = 3 * 24 * 60 * 60 * 1000;

export interface DeliveryOptions {
  send: SendOptions & { timeoutMs: number };
  /** WEBHOOK_SECRET_KEY's bytes, which open the endpoints' sealed secrets. */
  secretKey: Buffer;
  clock: Clock;
  random: () => number;
  /**
   * The longest a job waits in pg-boss before it looks at its event again. A job that wakes
   * before the event is due (on the clock) goes back to sleep for the rest; tests set 1 s and
   * move the clock, so that the schedule's hours pass on the clock, not in real time.
   */
  maxJobWaitSeconds: number;
  /** An attempt the sender refused to make (the network guard, the scheme): for the log. */
  onRefused?: (endpointId: string, url: string, reason: string) => void;
  /** Each attempt once it is recorded: for the metrics (worker-metrics.ts). */
  onRecorded?: (outcome: RecordedOutcome, lagSeconds: number) => void;
}

/** How an attempt ended: a 2xx, refused by the sender, a 410, or any other failure. */
export type RecordedOutcome = 'delivered' | 'refused' | 'gone' | 'failed';

function recordedOutcome(outcome: AttemptOutcome): RecordedOutcome {
  if (outcome.delivered) return 'delivered';
  if (outcome.error?.startsWith('refused ')) return 'refused';
  return outcome.gone ? 'gone' : 'failed';
}

export interface FetchedJob {
  id: string;
  eventId: string;
}

interface DeliveredAttempt {
  event: ClaimedEvent;
  outcome: AttemptOutcome;
  sentAt: Date;
}

/** A job's claim of its event, made with others in one statement. */
interface Claim {
  eventId: string;
  now: number;
  /** The event, claimed for this job; undefined when another holds it or it is not due. */
  event?: ClaimedEvent;
  /** Another job of the same event was in the same statement and took the claim. */
  duplicate?: boolean;
}

/**
 * Makes the attempts that jobs stand for. The event is claimed first (a lease in its row, taken by
 * one statement for the jobs that start within a few ms of each other): of two jobs of the same
 * event, in two workers, one sends and the other finds it leased and comes back when the lease
 * ends. Each attempt is then recorded as soon as it ends, and its job completed after: a failure's
 * attempt, the event's next state, the endpoint's health and the next attempt's job in one
 * transaction; delivered attempts that end within a few ms of each other in one statement. A
 * worker killed before it records leaves the event leased and the job active; pg-boss retries the
 * job once it expires, and the event is sent again (at least once, never lost).
 *
 * Each endpoint gets its share of the worker's attempts (DeliverySlots): a hanging or slow endpoint
 * delays its own events only.
 */
export class WebhookDelivery {
  readonly leaseMs: number;
  private readonly claims = new Batcher<Claim>((claims) => this.claim(claims));
  private readonly delivered = new Batcher<DeliveredAttempt>((attempts) =>
    this.recordDelivered(attempts),
  );
  private readonly completed = new Batcher<string>((ids) =>
    this.boss.complete(DELIVERY_QUEUE, ids),
  );
  private readonly running = new Set<Promise<void>>();
  private stopping = false;

  constructor(
    private readonly pool: Pool,
    private readonly boss: PgBoss,
    private readonly slots: DeliverySlots<FetchedJob>,
    private readonly onError: (error: unknown) => void,
    private readonly options: DeliveryOptions,
  ) {
    // Twice the attempt's timeout: an attempt in flight always ends before its lease does.
    this.leaseMs = 2 * options.send.timeoutMs;
  }

  /**
   * Takes jobs fetched with `slots.hold(jobs.length)`: each starts now, waits for its endpoint, or
   * goes back to the queue. Resolves once each is placed; the attempts go on by themselves.
   */
  async accept(jobs: FetchedJob[]): Promise<void> {
    let unplaced = jobs.length;
    try {
      const endpointOf = await this.endpointsOf(jobs);
      const deferred: { job: FetchedJob; endpointId: string }[] = [];
      const gone: string[] = [];
      for (const job of jobs) {
        unplaced--;
        const endpointId = endpointOf.get(job.eventId);
        if (endpointId === undefined) {
          gone.push(job.id);
          continue;
        }
        const admission = this.slots.admit(endpointId, job);
        if (admission === 'defer') deferred.push({ job, endpointId });
        else if (admission !== 'wait') this.start(job, endpointId, admission.startedAt);
      }
      await Promise.all([
        this.defer(deferred),
        ...gone.map((id) => this.completed.add(id).finally(() => this.slots.release())),
      ]);
    } finally {
      this.slots.release(unplaced);
    }
  }

  /** Jobs waiting for endpoints that have become slow (all, when stopping): back to the queue. */
  async deferWaitingOfSlowEndpoints(): Promise<void> {
    const taken = this.slots.takeWaitingOfSlowEndpoints(this.stopping);
    await this.defer(
      taken.flatMap(({ endpointId, jobs }) => jobs.map((job) => ({ job, endpointId }))),
    );
  }

  /**
   * The worker's stop: no attempt starts any more, the jobs that waited for their endpoint go back
   * to the queue (for another worker, or this one's next start), the attempts under way end and
   * are recorded, and what waits to be written is written.
   */
  async drain(): Promise<void> {
    this.stopping = true;
    await this.deferWaitingOfSlowEndpoints();
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
    await this.delivered.drain();
    await this.completed.drain();
  }

  /** Which endpoint each job's event is for; an event that is gone (endpoint deleted) has none. */
  private async endpointsOf(jobs: FetchedJob[]): Promise<Map<string, string>> {
    return endpointsOfEvents(
      this.pool,
      jobs.map((job) => job.eventId),
    );
  }

  /**
   * Jobs of slow endpoints: queued again for later (a new job), then completed, and their places
   * given back. Later is how long the endpoint's oldest attempt has been going (an endpoint that
   * hangs is not asked again every second), at least 1 s and at most an attempt's timeout.
   */
  private async defer(deferred: { job: FetchedJob; endpointId: string }[]): Promise<void> {
    if (deferred.length === 0) return;
    const timeoutSeconds = Math.ceil(this.options.send.timeoutMs / 1000);
    try {
      await this.boss.insert(
        deferred.map(({ job, endpointId }) => {
          const waited = Math.ceil(this.slots.oldestAttemptMs(endpointId) / 1000);
          return {
            name: DELIVERY_QUEUE,
            data: { eventId: job.eventId },
            ...jobOptions(this.leaseMs),
            // A number of seconds: pg-boss starts it that long after the database's now().
            startAfter: String(Math.max(1, Math.min(timeoutSeconds, waited))),
          };
        }),
      );
      await Promise.all(deferred.map(({ job }) => this.completed.add(job.id)));
    } finally {
      this.slots.release(deferred.length);
    }
  }

  /** Runs one job's attempt by itself; the next job waiting for its endpoint follows it. */
  private start(job: FetchedJob, endpointId: string, startedAt: number): void {
    const run = this.run(job, endpointId, startedAt).catch(this.onError);
    this.running.add(run);
    void run.finally(() => this.running.delete(run));
  }

  /**
   * Claims the job's event, makes the attempt, hands the endpoint's turn on as soon as the exchange
   * ends, then records it and completes the job. A failure to record leaves the job active: pg-boss
   * retries it once it expires (a retry of a delivered event sends nothing).
   */
  private async run(job: FetchedJob, endpointId: string, startedAt: number): Promise<void> {
    let turnPassed = false;
    const passTurn = () => {
      if (turnPassed) return;
      turnPassed = true;
      const next = this.slots.attemptEnded(endpointId, startedAt, !this.stopping);
      if (next) this.start(next.job, endpointId, next.startedAt);
    };
    try {
      const claim: Claim = { eventId: job.eventId, now: this.options.clock.now() };
      await this.claims.add(claim);
      if (claim.event !== undefined) {
        await this.attempt(claim.event, claim.now, passTurn);
      } else {
        passTurn();
        if (!claim.duplicate) await this.notClaimed(job.eventId, claim.now);
      }
      await this.completed.add(job.id);
    } finally {
      passTurn();
      this.slots.release();
    }
  }

  /**
   * Sends the event and records the attempt, as a span of its own when tracing is on (the
   * request and the statements that record it are its children); hands the endpoint's turn on as
   * soon as the exchange ends.
   */
  private attempt(event: ClaimedEvent, now: number, passTurn: () => void): Promise<void> {
    const attributes = {
      'visitor_api.webhook.event_id': event.id,
      'visitor_api.webhook.endpoint_id': event.endpoint_id,
      'visitor_api.webhook.attempt': event.attempts,
    };
    return tracer.startActiveSpan('webhook attempt', { attributes }, async (span) => {
      try {
        const outcome = await this.send(event, now);
        passTurn();
        span.setAttribute('visitor_api.webhook.outcome', recordedOutcome(outcome));
        if (outcome.status !== undefined) {
          span.setAttribute('http.response.status_code', outcome.status);
        }
        if (!outcome.delivered) {
          span.setStatus({
            code: SpanStatusCode.ERROR,
            message: outcome.error ?? `HTTP ${outcome.status}`,
          });
        }
        await this.record(event, now, outcome);
      } catch (error) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
        throw error;
      } finally {
        span.end();
      }
    });
  }

  /** Claims events for the jobs that started within a few ms of each other, in one statement. */
  private async claim(claims: Claim[]): Promise<void> {
    const now = Math.max(...claims.map((claim) => claim.now));
    const rows = await claimEvents(
      this.pool,
      claims.map((claim) => claim.eventId),
      new Date(now),
      new Date(now + this.leaseMs),
    );
    const byId = new Map(rows.map((event) => [event.id, event]));
    const taken = new Set<string>();
    for (const claim of claims) {
      const event = byId.get(claim.eventId);
      if (event === undefined) continue;
      // The first job of an event takes the claim; another in the same statement has nothing to do.
      if (taken.has(claim.eventId)) claim.duplicate = true;
      else claim.event = event;
      taken.add(claim.eventId);
      claim.now = now;
    }
  }

  /** One attempt's exchange. */
  private send(event: ClaimedEvent, now: number): Promise<AttemptOutcome> {
    return sendWebhook(
      {
        url: event.url,
        signingKeys: this.signingKeys(event, now),
        eventId: event.id,
        body: event.body,
        sentAt: new Date(now),
      },
      this.options.send,
    );
  }

  /** An attempt's outcome, recorded: the delivered ones gathered, a failure in its transaction. */
  private async record(event: ClaimedEvent, now: number, outcome: AttemptOutcome): Promise<void> {
    const sentAt = new Date(now);
    if (outcome.error?.startsWith('refused ')) {
      this.options.onRefused?.(event.endpoint_id, event.url, outcome.error);
    }
    if (outcome.delivered) await this.delivered.add({ event, outcome, sentAt });
    else await this.recordFailure(event.id, event, sentAt, outcome);
    const lagSeconds = (this.options.clock.now() - event.created_at.getTime()) / 1000;
    this.options.onRecorded?.(recordedOutcome(outcome), lagSeconds);
  }

  /** Delivered attempts of any endpoints, in one statement. */
  private async recordDelivered(attempts: DeliveredAttempt[]): Promise<void> {
    await recordDelivered(
      this.pool,
      attempts.map(({ event, outcome, sentAt }) => ({
        eventId: event.id,
        endpointId: event.endpoint_id,
        attempt: event.attempts,
        status: outcome.status ?? null,
        durationMs: outcome.durationMs,
        responseExcerpt: outcome.responseExcerpt,
        sentAt,
      })),
    );
  }

  /** The current secret's key, then the previous one's while the rotation overlap lasts. */
  private signingKeys(event: ClaimedEvent, now: number): Buffer[] {
    const open = (sealed: string) =>
      signingKeyOf(openSecret(this.options.secretKey, event.endpoint_id, sealed));
    const keys = [open(event.secret)];
    const previousValid =
      event.previous_secret !== null &&
      event.previous_secret_expires_at !== null &&
      event.previous_secret_expires_at.getTime() > now;
    if (previousValid) keys.push(open(event.previous_secret!));
    return keys;
  }

  /** The event is not ours to send now: say when to look again, if ever. */
  private async notClaimed(eventId: string, now: number): Promise<void> {
    const status = await eventStatus(this.pool, eventId);
    // Gone (its endpoint deleted), delivered, given up, or already paused.
    if (!status || status.state !== 'pending') return;
    if (!status.enabled) {
      await pauseEvent(this.pool, eventId);
      return;
    }
    const leaseEnd = status.lease_until?.getTime() ?? 0;
    const wakeAt = Math.max(status.next_attempt_at.getTime(), leaseEnd);
    await this.boss.send(
      DELIVERY_QUEUE,
      { eventId },
      { ...jobOptions(this.leaseMs), startAfter: this.waitSeconds(wakeAt - now) },
    );
  }

  private waitSeconds(ms: number): number {
    return Math.max(1, Math.min(Math.ceil(ms / 1000), this.options.maxJobWaitSeconds));
  }

  /** A failed attempt: recorded, and what follows decided, in one transaction. */
  private async recordFailure(
    eventId: string,
    event: ClaimedEvent,
    sentAt: Date,
    outcome: AttemptOutcome,
  ): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      await recordAttempt(client, {
        eventId,
        endpointId: event.endpoint_id,
        attempt: event.attempts,
        attemptedAt: sentAt,
        status: outcome.status ?? null,
        error: outcome.error ?? `HTTP ${outcome.status}`,
        durationMs: outcome.durationMs,
        responseExcerpt: outcome.responseExcerpt,
      });
      if (outcome.gone) {
        // The receiver asks us to stop: the endpoint is disabled now, and this event waits
        // with the others for an `enable`.
        await settleEvent(client, eventId, 'paused');
        const reason = `the receiver answered 410 Gone at ${sentAt.toISOString()}`;
        await disableEndpoint(client, event.endpoint_id, reason);
      } else {
        await this.failed(client, eventId, event, sentAt, outcome);
      }
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  private async failed(
    client: import('pg').PoolClient,
    eventId: string,
    event: ClaimedEvent,
    sentAt: Date,
    outcome: AttemptOutcome,
  ): Promise<void> {
    const failingSince = await endpointFailed(client, event.endpoint_id, sentAt);
    if (sentAt.getTime() - failingSince.getTime() >= FAILING_LIMIT_MS) {
      await settleEvent(client, eventId, 'paused');
      const reason = `every attempt failed for 3 days, since ${failingSince.toISOString()}`;
      await disableEndpoint(client, event.endpoint_id, reason);
      return;
    }
    const delay = retryDelayMs(event.attempts, this.options.random, outcome.retryAfterMs);
    if (delay === null) {
      await settleEvent(client, eventId, 'failed');
      return;
    }
    const nextAt = sentAt.getTime() + delay;
    await settleEvent(client, eventId, 'pending', new Date(nextAt));
    await this.boss.send(
      DELIVERY_QUEUE,
      { eventId },
      {
        ...jobOptions(this.leaseMs),
        startAfter: this.waitSeconds(delay),
        db: inTransaction(client),
      },
    );
  }
}

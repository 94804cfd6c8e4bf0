import type PgBoss from 'pg-boss';
import type { Pool } from 'pg';
import type { Clock } from '../common/clock';
import { retryDelayMs } from './delivery/retry-schedule';
import { signingKeyOf } from './delivery/secret';
import { sendWebhook } from './delivery/send-webhook';
import type { AttemptOutcome, SendOptions } from './delivery/webhook-attempt';
import { Batcher } from './batcher';
import type { DeliverySlots } from './delivery-slots';
import { openSecret } from './secret-box';
import { DELIVERY_QUEUE, inTransaction, jobOptions } from './webhook-queue';
import {
  CLAIM_EVENTS_SQL,
  DISABLE_ENDPOINT_SQL,
  ENDPOINT_FAILED_SQL,
  EVENT_ENDPOINTS_SQL,
  EVENT_STATUS_SQL,
  PAUSE_EVENT_SQL,
  RECORD_ATTEMPT_SQL,
  RECORD_DELIVERED_SQL,
  SETTLE_EVENT_SQL,
} from './webhooks.sql';

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
}

interface ClaimedEvent {
  id: string;
  endpoint_id: string;
  attempts: number;
  body: string;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
}

interface EventStatus {
  state: string;
  next_attempt_at: Date;
  lease_until: Date | null;
  enabled: boolean;
}

/** A job of the delivery queue, as the worker fetched it. */
export interface FetchedJob {
  id: string;
  eventId: string;
}

interface DeliveredAttempt {
  event: ClaimedEvent;
  outcome: AttemptOutcome;
  sentAt: Date;
}

/**
 * Makes the attempts that jobs stand for. The event is claimed first (a lease in its row, taken by
 * one statement): of two jobs of the same event, in two workers, one sends and the other finds it
 * leased and comes back when the lease ends. Each attempt is then recorded as soon as it ends, and
 * its job completed after: the outcome, the event's next state, the endpoint's health and the next
 * attempt's job in one transaction for a failure; the delivered ones that end within a few ms of
 * each other in one statement. A worker killed before it records leaves the event leased and the
 * job active; pg-boss retries the job once it expires, and the event is sent again (at least once,
 * never lost).
 *
 * Each endpoint gets at most its share of the worker's attempts in flight (DeliverySlots): a job
 * of an endpoint that has its share is not claimed but put back in the queue for a little later,
 * so that a hanging or slow endpoint delays its own events only.
 */
export class WebhookDelivery {
  readonly leaseMs: number;
  private readonly delivered = new Batcher<DeliveredAttempt>((attempts) =>
    this.recordDelivered(attempts),
  );
  private readonly completed = new Batcher<string>((ids) =>
    this.boss.complete(DELIVERY_QUEUE, ids),
  );

  constructor(
    private readonly pool: Pool,
    private readonly boss: PgBoss,
    private readonly slots: DeliverySlots,
    private readonly options: DeliveryOptions,
  ) {
    // Twice the attempt's timeout: an attempt in flight always ends before its lease does.
    this.leaseMs = 2 * options.send.timeoutMs;
  }

  /**
   * The attempts of jobs fetched with `slots.hold(jobs.length)`: each place is either started for
   * its endpoint or given back. Resolves once every attempt started here is recorded.
   */
  async deliver(jobs: FetchedJob[]): Promise<void> {
    const started: { job: FetchedJob; endpointId: string; startedAt: number }[] = [];
    let held = jobs.length;
    try {
      const endpointOf = await this.endpointsOf(jobs);
      const deferred: { job: FetchedJob; endpointId: string }[] = [];
      const gone: string[] = [];
      for (const job of jobs) {
        const endpointId = endpointOf.get(job.eventId);
        const startedAt = endpointId === undefined ? false : this.slots.tryStart(endpointId);
        if (startedAt !== false) {
          held--;
          started.push({ job, endpointId: endpointId!, startedAt });
        } else if (endpointId === undefined) gone.push(job.id);
        else deferred.push({ job, endpointId });
      }
      this.slots.unhold(held);
      held = 0;
      await Promise.all([this.defer(deferred), ...gone.map((id) => this.completed.add(id))]);
      await this.attempts(started);
    } finally {
      this.slots.unhold(held);
    }
  }

  /** Drains what waits to be written: the worker's stop calls it once nothing is in flight. */
  async drain(): Promise<void> {
    await this.delivered.drain();
    await this.completed.drain();
  }

  /** Which endpoint each job's event is for; an event that is gone (endpoint deleted) has none. */
  private async endpointsOf(jobs: FetchedJob[]): Promise<Map<string, string>> {
    const { rows } = await this.pool.query<{ id: string; endpoint_id: string }>(
      EVENT_ENDPOINTS_SQL,
      [jobs.map((job) => job.eventId)],
    );
    return new Map(rows.map((row) => [row.id, row.endpoint_id]));
  }

  /**
   * Jobs of endpoints that have their share in flight: queued again for later (a new job), then
   * completed. Later is how long the endpoint's oldest attempt has been going (an endpoint that
   * hangs is not asked again every second), at least 1 s and at most an attempt's timeout.
   */
  private async defer(deferred: { job: FetchedJob; endpointId: string }[]): Promise<void> {
    if (deferred.length === 0) return;
    const timeoutSeconds = Math.ceil(this.options.send.timeoutMs / 1000);
    await this.boss.insert(
      deferred.map(({ job, endpointId }) => {
        const waited = Math.ceil(this.slots.oldestAttemptMs(endpointId) / 1000);
        const seconds = Math.max(1, Math.min(timeoutSeconds, waited));
        return {
          name: DELIVERY_QUEUE,
          data: { eventId: job.eventId },
          ...jobOptions(this.leaseMs),
          // A number of seconds: pg-boss starts it that long after the database's now().
          startAfter: String(seconds),
        };
      }),
    );
    await Promise.all(deferred.map(({ job }) => this.completed.add(job.id)));
  }

  /** Claims the started jobs' events in one statement, then makes and records each attempt. */
  private async attempts(
    started: { job: FetchedJob; endpointId: string; startedAt: number }[],
  ): Promise<void> {
    if (started.length === 0) return;
    const finish = ({ endpointId, startedAt }: (typeof started)[number]) =>
      this.slots.finish(endpointId, startedAt);
    let claimed: Map<string, ClaimedEvent>;
    const now = this.options.clock.now();
    try {
      const { rows } = await this.pool.query<ClaimedEvent>(CLAIM_EVENTS_SQL, [
        started.map(({ job }) => job.eventId),
        new Date(now),
        new Date(now + this.leaseMs),
      ]);
      claimed = new Map(rows.map((event) => [event.id, event]));
    } catch (error) {
      started.forEach(finish);
      throw error;
    }
    const seen = new Set<string>();
    const results = await Promise.allSettled(
      started.map(async (attempt) => {
        try {
          // Two jobs of one event in one batch: the first does what is to be done, the other
          // nothing.
          const { eventId } = attempt.job;
          const first = !seen.has(eventId);
          seen.add(eventId);
          const event = claimed.get(eventId);
          if (first && event !== undefined) await this.attempt(event, now);
          else if (first) await this.notClaimed(eventId, now);
          await this.completed.add(attempt.job.id);
        } finally {
          finish(attempt);
        }
      }),
    );
    // A failure to record leaves its job active: pg-boss retries it once it expires (a retry of a
    // delivered event sends nothing).
    const failure = results.find((result) => result.status === 'rejected');
    if (failure) throw failure.reason;
  }

  /** One attempt, recorded as soon as it ends. */
  private async attempt(event: ClaimedEvent, now: number): Promise<void> {
    const sentAt = new Date(now);
    const outcome = await sendWebhook(
      {
        url: event.url,
        signingKeys: this.signingKeys(event, now),
        eventId: event.id,
        body: event.body,
        sentAt,
      },
      this.options.send,
    );
    if (outcome.delivered) await this.delivered.add({ event, outcome, sentAt });
    else await this.record(event.id, event, sentAt, outcome);
  }

  /** Delivered attempts of any endpoints, in one statement. */
  private async recordDelivered(attempts: DeliveredAttempt[]): Promise<void> {
    await this.pool.query(RECORD_DELIVERED_SQL, [
      attempts.map(({ event }) => event.id),
      attempts.map(({ event }) => event.endpoint_id),
      attempts.map(({ event }) => event.attempts),
      attempts.map(({ outcome }) => outcome.status ?? null),
      attempts.map(({ outcome }) => outcome.durationMs),
      attempts.map(({ outcome }) => outcome.responseExcerpt),
      attempts.map(({ sentAt }) => sentAt),
    ]);
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
    const { rows } = await this.pool.query<EventStatus>(EVENT_STATUS_SQL, [eventId]);
    const status = rows[0];
    // Gone (its endpoint deleted), delivered, given up, or already paused.
    if (!status || status.state !== 'pending') return;
    if (!status.enabled) {
      await this.pool.query(PAUSE_EVENT_SQL, [eventId]);
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
  private async record(
    eventId: string,
    event: ClaimedEvent,
    sentAt: Date,
    outcome: AttemptOutcome,
  ): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(RECORD_ATTEMPT_SQL, [
        eventId,
        event.endpoint_id,
        event.attempts,
        sentAt,
        outcome.status ?? null,
        outcome.error ?? `HTTP ${outcome.status}`,
        outcome.durationMs,
        outcome.responseExcerpt,
      ]);
      if (outcome.gone) {
        // The receiver asks us to stop: the endpoint is disabled now, and this event waits
        // with the others for an `enable`.
        await client.query(SETTLE_EVENT_SQL, [eventId, 'paused', null]);
        await client.query(DISABLE_ENDPOINT_SQL, [
          event.endpoint_id,
          `the receiver answered 410 Gone at ${sentAt.toISOString()}`,
        ]);
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
    const { rows } = await client.query<{ failing_since: Date }>(ENDPOINT_FAILED_SQL, [
      event.endpoint_id,
      sentAt,
    ]);
    const failingSince = rows[0].failing_since;
    if (sentAt.getTime() - failingSince.getTime() >= FAILING_LIMIT_MS) {
      await client.query(SETTLE_EVENT_SQL, [eventId, 'paused', null]);
      await client.query(DISABLE_ENDPOINT_SQL, [
        event.endpoint_id,
        `every attempt failed for 3 days, since ${failingSince.toISOString()}`,
      ]);
      return;
    }
    const delay = retryDelayMs(event.attempts, this.options.random, outcome.retryAfterMs);
    if (delay === null) {
      await client.query(SETTLE_EVENT_SQL, [eventId, 'failed', null]);
      return;
    }
    const nextAt = sentAt.getTime() + delay;
    await client.query(SETTLE_EVENT_SQL, [eventId, 'pending', new Date(nextAt)]);
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

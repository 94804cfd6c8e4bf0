import type PgBoss from 'pg-boss';
import type { Pool } from 'pg';
import type { Clock } from '../common/clock';
import { retryDelayMs } from './delivery/retry-schedule';
import { signingKeyOf } from './delivery/secret';
import { sendWebhook } from './delivery/send-webhook';
import type { AttemptOutcome, SendOptions } from './delivery/webhook-attempt';
import { openSecret } from './secret-box';
import { DELIVERY_QUEUE, inTransaction, jobOptions } from './webhook-queue';
import {
  CLAIM_EVENTS_SQL,
  DISABLE_ENDPOINT_SQL,
  ENDPOINT_FAILED_SQL,
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

/**
 * Makes the attempt a job stands for. The event is claimed first (a lease in its row, taken by
 * one statement): of two jobs of the same event, in two workers, one sends and the other finds it
 * leased and comes back when the lease ends. The outcome, the event's next state, the endpoint's
 * health and the next attempt's job are then written in one transaction: a worker killed before
 * it commits leaves the event leased, pg-boss retries the job once it expires, and the event is
 * sent again (at least once, never lost).
 */
export class WebhookDelivery {
  readonly leaseMs: number;

  constructor(
    private readonly pool: Pool,
    private readonly boss: PgBoss,
    private readonly options: DeliveryOptions,
  ) {
    // Twice the attempt's timeout: an attempt in flight always ends before its lease does.
    this.leaseMs = 2 * options.send.timeoutMs;
  }

  /**
   * The attempts of a batch of jobs: claimed in one statement, sent at once, the successes
   * recorded in one statement, each failure in a transaction of its own (measured: per-event
   * statements delivered 61 events/s on a loaded machine, docs/benchmarks.md (w)).
   */
  async deliver(eventIds: string[]): Promise<void> {
    const now = this.options.clock.now();
    const { rows } = await this.pool.query<ClaimedEvent>(CLAIM_EVENTS_SQL, [
      eventIds,
      new Date(now),
      new Date(now + this.leaseMs),
    ]);
    const claimed = new Set(rows.map((event) => event.id));
    const sentAt = new Date(now);
    const [outcomes] = await Promise.all([
      Promise.all(
        rows.map((event) =>
          sendWebhook(
            {
              url: event.url,
              signingKeys: this.signingKeys(event, now),
              eventId: event.id,
              body: event.body,
              sentAt,
            },
            this.options.send,
          ),
        ),
      ),
      ...eventIds.filter((id) => !claimed.has(id)).map((id) => this.notClaimed(id, now)),
    ]);
    const delivered = rows.filter((_event, i) => outcomes[i].delivered);
    if (delivered.length > 0) {
      const results = outcomes.filter((outcome) => outcome.delivered);
      await this.pool.query(RECORD_DELIVERED_SQL, [
        delivered.map((event) => event.id),
        delivered.map((event) => event.endpoint_id),
        delivered.map((event) => event.attempts),
        results.map((outcome) => outcome.status ?? null),
        results.map((outcome) => outcome.durationMs),
        results.map((outcome) => outcome.responseExcerpt),
        sentAt,
      ]);
    }
    for (const [i, event] of rows.entries()) {
      if (!outcomes[i].delivered) await this.record(event.id, event, sentAt, outcomes[i]);
    }
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

import { rowsOf, type PoolOrClient } from '../../database/rows';

// The delivery worker's statements: claim events, record attempts, pause and disable.

/**
 * Takes the lease of the events (of a batch of jobs) due now whose endpoint is enabled, and
 * counts their attempt: a second holder of a job of the same event finds it leased and does not
 * send it. $1 events, $2 now, $3 lease end.
 */
const CLAIM_EVENTS_SQL = `UPDATE webhook_events event
SET attempts = event.attempts + 1, lease_until = $3
FROM webhook_endpoints endpoint
WHERE event.id = ANY($1::text[]) AND endpoint.id = event.endpoint_id AND endpoint.enabled
  AND event.state = 'pending' AND event.next_attempt_at <= $2
  AND (event.lease_until IS NULL OR event.lease_until <= $2)
RETURNING event.id, event.endpoint_id, event.attempts, event.body, event.created_at, endpoint.url,
  endpoint.secret, endpoint.previous_secret, endpoint.previous_secret_expires_at,
  endpoint.failing_since`;

export interface ClaimedEvent {
  id: string;
  endpoint_id: string;
  attempts: number;
  body: string;
  /** When it was dispatched: its delivery's lag is measured from there. */
  created_at: Date;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  failing_since: Date | null;
}

export function claimEvents(
  client: PoolOrClient,
  eventIds: string[],
  now: Date,
  leaseUntil: Date,
): Promise<ClaimedEvent[]> {
  return rowsOf<ClaimedEvent>(client, CLAIM_EVENTS_SQL, [eventIds, now, leaseUntil]);
}

/** The endpoint of each of these events that still exists (a deleted endpoint takes its events). */
const EVENT_ENDPOINTS_SQL = `SELECT id, endpoint_id FROM webhook_events WHERE id = ANY($1::text[])`;

/** Each event's endpoint, by event id. */
export async function endpointsOfEvents(
  client: PoolOrClient,
  eventIds: string[],
): Promise<Map<string, string>> {
  const rows = await rowsOf<{ id: string; endpoint_id: string }>(client, EVENT_ENDPOINTS_SQL, [
    eventIds,
  ]);
  return new Map(rows.map((row) => [row.id, row.endpoint_id]));
}

/**
 * Delivered attempts, of any endpoints, in one statement: each recorded, its event delivered, its
 * endpoint's failing streak ended. $1 events, $2 endpoints, $3 attempt numbers, $4 statuses,
 * $5 durations, $6 excerpts, $7 when each was sent (timestamptz: node-postgres writes a Date with
 * its offset, which a plain timestamp would drop).
 */
const RECORD_DELIVERED_SQL = `WITH done AS (
  SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::int[], $5::int[], $6::text[],
    $7::timestamptz[])
    AS done(event_id, endpoint_id, attempt, status, duration_ms, excerpt, sent_at)
), recorded AS (
  INSERT INTO webhook_attempts
    (event_id, endpoint_id, attempt, attempted_at, status, error, duration_ms, response_excerpt)
  SELECT event_id, endpoint_id, attempt, sent_at, status, NULL, duration_ms, excerpt FROM done
), settled AS (
  UPDATE webhook_events event SET state = 'delivered', lease_until = NULL
  FROM done WHERE event.id = done.event_id
)
UPDATE webhook_endpoints endpoint SET last_success_at = latest.sent_at, failing_since = NULL
FROM (SELECT endpoint_id, max(sent_at) AS sent_at FROM done GROUP BY endpoint_id) latest
WHERE endpoint.id = latest.endpoint_id`;

export interface DeliveredAttemptRow {
  eventId: string;
  endpointId: string;
  attempt: number;
  status: number | null;
  durationMs: number;
  responseExcerpt: string;
  sentAt: Date;
}

export async function recordDelivered(
  client: PoolOrClient,
  attempts: DeliveredAttemptRow[],
): Promise<void> {
  const column = <K extends keyof DeliveredAttemptRow>(key: K) => attempts.map((a) => a[key]);
  await client.query(RECORD_DELIVERED_SQL, [
    column('eventId'),
    column('endpointId'),
    column('attempt'),
    column('status'),
    column('durationMs'),
    column('responseExcerpt'),
    column('sentAt'),
  ]);
}

/** Why an event could not be claimed. */
const EVENT_STATUS_SQL = `SELECT event.state, event.next_attempt_at, event.lease_until,
  endpoint.enabled
FROM webhook_events event JOIN webhook_endpoints endpoint ON endpoint.id = event.endpoint_id
WHERE event.id = $1`;

export interface EventStatus {
  state: string;
  next_attempt_at: Date;
  lease_until: Date | null;
  enabled: boolean;
}

export async function eventStatus(
  client: PoolOrClient,
  eventId: string,
): Promise<EventStatus | undefined> {
  const [status] = await rowsOf<EventStatus>(client, EVENT_STATUS_SQL, [eventId]);
  return status;
}

/** A pending event of a disabled endpoint waits for `enable` (RESUME_PAUSED_SQL). */
const PAUSE_EVENT_SQL = `UPDATE webhook_events SET state = 'paused', lease_until = NULL
WHERE id = $1 AND state = 'pending'`;

export async function pauseEvent(client: PoolOrClient, eventId: string): Promise<void> {
  await client.query(PAUSE_EVENT_SQL, [eventId]);
}

/** $1 event, $2 endpoint, $3 attempt, $4 time, $5 status, $6 error, $7 duration, $8 excerpt. */
const RECORD_ATTEMPT_SQL = `INSERT INTO webhook_attempts
  (event_id, endpoint_id, attempt, attempted_at, status, error, duration_ms, response_excerpt)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`;

export async function recordAttempt(
  client: PoolOrClient,
  attempt: {
    eventId: string;
    endpointId: string;
    attempt: number;
    attemptedAt: Date;
    status: number | null;
    error: string;
    durationMs: number;
    responseExcerpt: string;
  },
): Promise<void> {
  const { eventId, endpointId, attemptedAt, status, error, durationMs, responseExcerpt } = attempt;
  await client.query(RECORD_ATTEMPT_SQL, [
    eventId,
    endpointId,
    attempt.attempt,
    attemptedAt,
    status,
    error,
    durationMs,
    responseExcerpt,
  ]);
}

/** $1 event, $2 state, $3 next attempt (unchanged when null). */
const SETTLE_EVENT_SQL = `UPDATE webhook_events
SET state = $2, lease_until = NULL, next_attempt_at = coalesce($3, next_attempt_at)
WHERE id = $1`;

export async function settleEvent(
  client: PoolOrClient,
  eventId: string,
  state: 'pending' | 'paused' | 'failed',
  nextAttemptAt: Date | null = null,
): Promise<void> {
  await client.query(SETTLE_EVENT_SQL, [eventId, state, nextAttemptAt]);
}

/** Starts the failing streak at the first failure; returns when it started. $1 id, $2 now. */
const ENDPOINT_FAILED_SQL = `UPDATE webhook_endpoints
SET failing_since = coalesce(failing_since, $2) WHERE id = $1
RETURNING failing_since`;

/** When the endpoint's failing streak started (now, if this is its first failure). */
export async function endpointFailed(
  client: PoolOrClient,
  endpointId: string,
  now: Date,
): Promise<Date> {
  const [row] = await rowsOf<{ failing_since: Date }>(client, ENDPOINT_FAILED_SQL, [
    endpointId,
    now,
  ]);
  return row.failing_since;
}

/** $1 id, $2 reason. */
const DISABLE_ENDPOINT_SQL = `UPDATE webhook_endpoints
SET enabled = false, disabled_reason = $2 WHERE id = $1`;

export async function disableEndpoint(
  client: PoolOrClient,
  endpointId: string,
  reason: string,
): Promise<void> {
  await client.query(DISABLE_ENDPOINT_SQL, [endpointId, reason]);
}

import type { ClientBase } from 'pg';
import { feedPageCte, SAFE_BOUND_CTES } from '../changes/change-feed-sql';
import { itemJsonSql } from '../items/item-sql';
import { WEBHOOK_FEEDS, type EventType, type WebhookFeed } from './webhook-events';

/*
 * The webhooks' statements, one family per use: the admin tool's (endpoints), the dispatcher's
 * (changes to events), the delivery worker's (claim, record). Each is here with the function that
 * runs it and the type of its rows, as graphile-worker keeps its src/sql/: a caller names its
 * arguments, never a `$n`. Endpoints hold xid8 positions, which Prisma cannot write, so the admin
 * side uses SQL here too.
 */

/** Where a statement runs: a pool, or the client of a transaction. */
export type Sql = Pick<ClientBase, 'query'>;

/** The rows of a statement run with these values. */
async function rowsOf<Row>(sql: Sql, text: string, values: unknown[]): Promise<Row[]> {
  return (await sql.query(text, values)).rows as Row[];
}

/**
 * A new endpoint starts at the feeds' safe bound: every change that can still appear (at or
 * above it) is delivered, none from before it. `(bound, '')` is before every id at the bound.
 * $1 id, $2 workspace, $3 url, $4 event types, $5 sealed secret, $6 now.
 */
const CREATE_ENDPOINT_SQL = `WITH ${SAFE_BOUND_CTES}
INSERT INTO webhook_endpoints
  (id, workspace_id, url, event_types, secret, created_at, company_txid, lead_txid)
SELECT $1, $2, $3, $4, $5, $6, xmin, xmin FROM bound
RETURNING id, workspace_id AS "workspaceId", url, event_types AS "eventTypes",
  created_at AS "createdAt"`;

export interface CreatedEndpointRow {
  id: string;
  workspaceId: string;
  url: string;
  eventTypes: EventType[];
  createdAt: Date;
}

export async function createEndpoint(
  sql: Sql,
  endpoint: { id: string; workspaceId: string; url: string; eventTypes: EventType[] },
  sealedSecret: string,
  now: Date,
): Promise<CreatedEndpointRow> {
  const { id, workspaceId, url, eventTypes } = endpoint;
  const values = [id, workspaceId, url, eventTypes, sealedSecret, now];
  const [created] = await rowsOf<CreatedEndpointRow>(sql, CREATE_ENDPOINT_SQL, values);
  return created;
}

/**
 * The endpoints of a workspace, for `webhook list`: never a secret. `failures` counts the
 * attempts since the last success (when failing), `pending` the events not yet delivered.
 */
const LIST_ENDPOINTS_SQL = `SELECT endpoint.id, endpoint.url, endpoint.event_types AS "eventTypes",
  CASE WHEN endpoint.enabled THEN 'enabled' ELSE 'disabled' END AS state,
  endpoint.disabled_reason AS "disabledReason", endpoint.failing_since AS "failingSince",
  endpoint.last_success_at AS "lastSuccessAt", endpoint.created_at AS "createdAt",
  (SELECT count(*)::int FROM webhook_attempts attempt
    WHERE attempt.endpoint_id = endpoint.id AND attempt.attempted_at >= endpoint.failing_since
  ) AS failures,
  (SELECT count(*)::int FROM webhook_events event
    WHERE event.endpoint_id = endpoint.id AND event.state IN ('pending', 'paused')) AS pending
FROM webhook_endpoints endpoint
WHERE endpoint.workspace_id = $1
ORDER BY endpoint.created_at, endpoint.id`;

export interface EndpointSummary {
  id: string;
  url: string;
  eventTypes: EventType[];
  state: 'enabled' | 'disabled';
  disabledReason: string | null;
  failingSince: Date | null;
  lastSuccessAt: Date | null;
  createdAt: Date;
  failures: number;
  pending: number;
}

export function listEndpoints(sql: Sql, workspaceId: string): Promise<EndpointSummary[]> {
  return rowsOf<EndpointSummary>(sql, LIST_ENDPOINTS_SQL, [workspaceId]);
}

/** $1 id, $2 enabled, $3 reason (null to clear). Enabling also forgets the failing streak. */
const SET_ENABLED_SQL = `UPDATE webhook_endpoints
SET enabled = $2, disabled_reason = $3,
  failing_since = CASE WHEN $2 THEN NULL ELSE failing_since END
WHERE id = $1
RETURNING id, enabled`;

/** False when there is no such endpoint. */
export async function setEndpointEnabled(
  sql: Sql,
  id: string,
  enabled: boolean,
  reason: string | null,
): Promise<boolean> {
  return (await rowsOf(sql, SET_ENABLED_SQL, [id, enabled, reason])).length > 0;
}

const DELETE_ENDPOINT_SQL = `DELETE FROM webhook_endpoints WHERE id = $1 RETURNING id`;

/** False when there is no such endpoint. */
export async function deleteEndpoint(sql: Sql, id: string): Promise<boolean> {
  return (await rowsOf(sql, DELETE_ENDPOINT_SQL, [id])).length > 0;
}

/** $1 id, $2 new sealed secret, $3 its predecessor sealed, $4 until when the old one signs too. */
const ROTATE_SECRET_SQL = `UPDATE webhook_endpoints
SET secret = $2, previous_secret = $3, previous_secret_expires_at = $4
WHERE id = $1
RETURNING id`;

export async function rotateSecret(
  sql: Sql,
  id: string,
  secrets: { sealed: string; previousSealed: string; previousExpiresAt: Date },
): Promise<void> {
  const { sealed, previousSealed, previousExpiresAt } = secrets;
  await sql.query(ROTATE_SECRET_SQL, [id, sealed, previousSealed, previousExpiresAt]);
}

const ENDPOINT_SECRET_SQL = `SELECT secret FROM webhook_endpoints WHERE id = $1 FOR UPDATE`;

/** The endpoint's sealed secret, its row locked for the transaction; undefined: no endpoint. */
export async function lockEndpointSecret(sql: Sql, id: string): Promise<string | undefined> {
  const [row] = await rowsOf<{ secret: string }>(sql, ENDPOINT_SECRET_SQL, [id]);
  return row?.secret;
}

const ENDPOINT_EXISTS_SQL = `SELECT 1 FROM webhook_endpoints WHERE id = $1`;

export async function endpointExists(sql: Sql, id: string): Promise<boolean> {
  return (await rowsOf(sql, ENDPOINT_EXISTS_SQL, [id])).length > 0;
}

const WORKSPACE_EXISTS_SQL = `SELECT 1 FROM workspaces WHERE id = $1`;

export async function workspaceExists(sql: Sql, id: string): Promise<boolean> {
  return (await rowsOf(sql, WORKSPACE_EXISTS_SQL, [id])).length > 0;
}

/** The latest attempts of an endpoint, newest first. $1 id, $2 limit. */
const DELIVERIES_SQL = `SELECT attempt.event_id AS "eventId", event.type, attempt.attempt,
  attempt.attempted_at AS "attemptedAt", attempt.status, attempt.error,
  attempt.duration_ms AS "durationMs", attempt.response_excerpt AS "responseExcerpt",
  event.state AS "eventState"
FROM webhook_attempts attempt
JOIN webhook_events event ON event.id = attempt.event_id
WHERE attempt.endpoint_id = $1
ORDER BY attempt.id DESC
LIMIT $2`;

export interface DeliveryAttempt {
  eventId: string;
  type: EventType;
  attempt: number;
  attemptedAt: Date;
  status: number | null;
  error: string | null;
  durationMs: number;
  /** The receiver's answer: its first 1 KB, as received ('' when none came). */
  responseExcerpt: string;
  eventState: string;
}

export function latestDeliveries(sql: Sql, id: string, limit: number): Promise<DeliveryAttempt[]> {
  return rowsOf<DeliveryAttempt>(sql, DELIVERIES_SQL, [id, limit]);
}

// --- Dispatch --------------------------------------------------------------------------------

/**
 * The next enabled endpoint after $1 (by id) that no other dispatcher holds, locked until the
 * transaction that advances its positions commits: two workers never dispatch one endpoint.
 */
const CLAIM_ENDPOINT_SQL = `SELECT id, workspace_id, event_types,
  company_txid::text, company_id, lead_txid::text, lead_id
FROM webhook_endpoints
WHERE enabled AND id > $1
ORDER BY id
LIMIT 1
FOR UPDATE SKIP LOCKED`;

export interface DispatchedEndpoint {
  id: string;
  workspace_id: string;
  event_types: EventType[];
  company_txid: string;
  company_id: string;
  lead_txid: string;
  lead_id: string;
}

/** In a transaction: the endpoint stays locked until it ends. */
export async function claimEndpointAfter(
  sql: Sql,
  after: string,
): Promise<DispatchedEndpoint | undefined> {
  const [endpoint] = await rowsOf<DispatchedEndpoint>(sql, CLAIM_ENDPOINT_SQL, [after]);
  return endpoint;
}

/**
 * The changes of one feed after an endpoint's position and below the safe bound, in the feed's
 * order, each with the item's JSON as the API returns it now (null for a deletion): the feed
 * statement's reading, without the cursor's bookkeeping. $1 workspace, $2 txid, $3 id, $4 limit.
 */
function feedChangesSql(feed: WebhookFeed): string {
  return `WITH ${SAFE_BOUND_CTES}, ${feedPageCte(feed.changeTable)}
SELECT page.id, page.txid::text AS txid,
  CASE WHEN NOT page.deleted THEN ${itemJsonSql(feed, 'page.id')}::text END AS item
FROM page
ORDER BY page.txid, page.id`;
}

const FEED_CHANGES_SQL = new Map(WEBHOOK_FEEDS.map((feed) => [feed, feedChangesSql(feed)]));

export interface FeedChange {
  id: string;
  txid: string;
  /** The item's JSON as the API returns it now; null for a deletion. */
  item: string | null;
}

/** At most `limit` changes of the feed past the endpoint's position `(txid, id)`. */
export function feedChangesAfter(
  sql: Sql,
  feed: WebhookFeed,
  workspaceId: string,
  position: { txid: string; id: string },
  limit: number,
): Promise<FeedChange[]> {
  const text = FEED_CHANGES_SQL.get(feed)!;
  return rowsOf<FeedChange>(sql, text, [workspaceId, position.txid, position.id, limit]);
}

/** $1 endpoint, $2 txid, $3 id. The column names come from WEBHOOK_FEEDS, never from input. */
function advanceSql({ txidColumn, idColumn }: WebhookFeed): string {
  return `UPDATE webhook_endpoints SET ${txidColumn} = $2::xid8, ${idColumn} = $3 WHERE id = $1`;
}

export async function advanceEndpoint(
  sql: Sql,
  feed: WebhookFeed,
  endpointId: string,
  position: { txid: string; id: string },
): Promise<void> {
  await sql.query(advanceSql(feed), [endpointId, position.txid, position.id]);
}

/** $1 ids, $2 endpoint, $3 types, $4 bodies, $5 now. */
const INSERT_EVENTS_SQL = `INSERT INTO webhook_events
  (id, endpoint_id, type, body, created_at, next_attempt_at)
SELECT event.id, $2, event.type, event.body, $5, $5
FROM unnest($1::text[], $3::text[], $4::text[]) AS event(id, type, body)`;

export async function insertEvents(
  sql: Sql,
  endpointId: string,
  events: { ids: string[]; types: EventType[]; bodies: string[] },
  now: Date,
): Promise<void> {
  await sql.query(INSERT_EVENTS_SQL, [events.ids, endpointId, events.types, events.bodies, now]);
}

/** Events held while their endpoint was disabled, queued again once it is enabled. */
const RESUME_PAUSED_SQL = `UPDATE webhook_events
SET state = 'pending', next_attempt_at = $2, lease_until = NULL
WHERE endpoint_id = $1 AND state = 'paused'
RETURNING id`;

/** The ids of the events queued again. */
export async function resumePaused(sql: Sql, endpointId: string, now: Date): Promise<string[]> {
  const rows = await rowsOf<{ id: string }>(sql, RESUME_PAUSED_SQL, [endpointId, now]);
  return rows.map((row) => row.id);
}

// --- Delivery --------------------------------------------------------------------------------

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
RETURNING event.id, event.endpoint_id, event.attempts, event.body, endpoint.url, endpoint.secret,
  endpoint.previous_secret, endpoint.previous_secret_expires_at, endpoint.failing_since`;

export interface ClaimedEvent {
  id: string;
  endpoint_id: string;
  attempts: number;
  body: string;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  failing_since: Date | null;
}

export function claimEvents(
  sql: Sql,
  eventIds: string[],
  now: Date,
  leaseUntil: Date,
): Promise<ClaimedEvent[]> {
  return rowsOf<ClaimedEvent>(sql, CLAIM_EVENTS_SQL, [eventIds, now, leaseUntil]);
}

/** The endpoint of each of these events that still exists (a deleted endpoint takes its events). */
const EVENT_ENDPOINTS_SQL = `SELECT id, endpoint_id FROM webhook_events WHERE id = ANY($1::text[])`;

/** Each event's endpoint, by event id. */
export async function endpointsOfEvents(
  sql: Sql,
  eventIds: string[],
): Promise<Map<string, string>> {
  const rows = await rowsOf<{ id: string; endpoint_id: string }>(sql, EVENT_ENDPOINTS_SQL, [
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

export async function recordDelivered(sql: Sql, attempts: DeliveredAttemptRow[]): Promise<void> {
  const column = <K extends keyof DeliveredAttemptRow>(key: K) => attempts.map((a) => a[key]);
  await sql.query(RECORD_DELIVERED_SQL, [
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

export async function eventStatus(sql: Sql, eventId: string): Promise<EventStatus | undefined> {
  const [status] = await rowsOf<EventStatus>(sql, EVENT_STATUS_SQL, [eventId]);
  return status;
}

/** A pending event of a disabled endpoint waits for `enable` (RESUME_PAUSED_SQL). */
const PAUSE_EVENT_SQL = `UPDATE webhook_events SET state = 'paused', lease_until = NULL
WHERE id = $1 AND state = 'pending'`;

export async function pauseEvent(sql: Sql, eventId: string): Promise<void> {
  await sql.query(PAUSE_EVENT_SQL, [eventId]);
}

/** $1 event, $2 endpoint, $3 attempt, $4 time, $5 status, $6 error, $7 duration, $8 excerpt. */
const RECORD_ATTEMPT_SQL = `INSERT INTO webhook_attempts
  (event_id, endpoint_id, attempt, attempted_at, status, error, duration_ms, response_excerpt)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`;

export async function recordAttempt(
  sql: Sql,
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
  await sql.query(RECORD_ATTEMPT_SQL, [
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
  sql: Sql,
  eventId: string,
  state: 'pending' | 'paused' | 'failed',
  nextAttemptAt: Date | null = null,
): Promise<void> {
  await sql.query(SETTLE_EVENT_SQL, [eventId, state, nextAttemptAt]);
}

/** Starts the failing streak at the first failure; returns when it started. $1 id, $2 now. */
const ENDPOINT_FAILED_SQL = `UPDATE webhook_endpoints
SET failing_since = coalesce(failing_since, $2) WHERE id = $1
RETURNING failing_since`;

/** When the endpoint's failing streak started (now, if this is its first failure). */
export async function endpointFailed(sql: Sql, endpointId: string, now: Date): Promise<Date> {
  const [row] = await rowsOf<{ failing_since: Date }>(sql, ENDPOINT_FAILED_SQL, [endpointId, now]);
  return row.failing_since;
}

/** $1 id, $2 reason. */
const DISABLE_ENDPOINT_SQL = `UPDATE webhook_endpoints
SET enabled = false, disabled_reason = $2 WHERE id = $1`;

export async function disableEndpoint(sql: Sql, endpointId: string, reason: string): Promise<void> {
  await sql.query(DISABLE_ENDPOINT_SQL, [endpointId, reason]);
}

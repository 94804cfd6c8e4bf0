import { feedPageCte, SAFE_BOUND_CTES } from '../changes/change-feed-sql';
import { itemJsonSql } from '../items/item-sql';
import type { WebhookFeed } from './webhook-events';

/*
 * The webhooks' statements, one family per use: the admin tool's (endpoints), the dispatcher's
 * (changes to events), the delivery worker's (claim, record). Endpoints hold xid8 positions,
 * which Prisma cannot write, so the admin side uses SQL here too.
 */

/**
 * A new endpoint starts at the feeds' safe bound: every change that can still appear (at or
 * above it) is delivered, none from before it. `(bound, '')` is before every id at the bound.
 * $1 id, $2 workspace, $3 url, $4 event types, $5 sealed secret, $6 now.
 */
export const CREATE_ENDPOINT_SQL = `WITH ${SAFE_BOUND_CTES}
INSERT INTO webhook_endpoints
  (id, workspace_id, url, event_types, secret, created_at, company_txid, lead_txid)
SELECT $1, $2, $3, $4, $5, $6, xmin, xmin FROM bound
RETURNING id, workspace_id AS "workspaceId", url, event_types AS "eventTypes",
  created_at AS "createdAt"`;

/**
 * The endpoints of a workspace, for `webhook list`: never a secret. `failures` counts the
 * attempts since the last success (when failing), `pending` the events not yet delivered.
 */
export const LIST_ENDPOINTS_SQL = `SELECT endpoint.id, endpoint.url, endpoint.event_types AS "eventTypes",
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

/** $1 id, $2 enabled, $3 reason (null to clear). Enabling also forgets the failing streak. */
export const SET_ENABLED_SQL = `UPDATE webhook_endpoints
SET enabled = $2, disabled_reason = $3,
  failing_since = CASE WHEN $2 THEN NULL ELSE failing_since END
WHERE id = $1
RETURNING id, enabled`;

export const DELETE_ENDPOINT_SQL = `DELETE FROM webhook_endpoints WHERE id = $1 RETURNING id`;

/** $1 id, $2 new sealed secret, $3 its predecessor sealed, $4 until when the old one signs too. */
export const ROTATE_SECRET_SQL = `UPDATE webhook_endpoints
SET secret = $2, previous_secret = $3, previous_secret_expires_at = $4
WHERE id = $1
RETURNING id`;

export const ENDPOINT_SECRET_SQL = `SELECT secret FROM webhook_endpoints WHERE id = $1 FOR UPDATE`;

/** The latest attempts of an endpoint, newest first. $1 id, $2 limit. */
export const DELIVERIES_SQL = `SELECT attempt.event_id AS "eventId", event.type, attempt.attempt,
  attempt.attempted_at AS "attemptedAt", attempt.status, attempt.error,
  attempt.duration_ms AS "durationMs", attempt.response_excerpt AS "responseExcerpt",
  event.state AS "eventState"
FROM webhook_attempts attempt
JOIN webhook_events event ON event.id = attempt.event_id
WHERE attempt.endpoint_id = $1
ORDER BY attempt.id DESC
LIMIT $2`;

// --- Dispatch --------------------------------------------------------------------------------

/**
 * The next enabled endpoint after $1 (by id) that no other dispatcher holds, locked until the
 * transaction that advances its positions commits: two workers never dispatch one endpoint.
 */
export const CLAIM_ENDPOINT_SQL = `SELECT id, workspace_id, event_types,
  company_txid::text, company_id, lead_txid::text, lead_id
FROM webhook_endpoints
WHERE enabled AND id > $1
ORDER BY id
LIMIT 1
FOR UPDATE SKIP LOCKED`;

/**
 * The changes of one feed after an endpoint's position and below the safe bound, in the feed's
 * order, each with the item's JSON as the API returns it now (null for a deletion): the feed
 * statement's reading, without the cursor's bookkeeping. $1 workspace, $2 txid, $3 id, $4 limit.
 */
export function feedChangesSql(feed: WebhookFeed): string {
  return `WITH ${SAFE_BOUND_CTES}, ${feedPageCte(feed.changeTable)}
SELECT page.id, page.txid::text AS txid,
  CASE WHEN NOT page.deleted THEN ${itemJsonSql(feed, 'page.id')}::text END AS item
FROM page
ORDER BY page.txid, page.id`;
}

/** $1 endpoint, $2 txid, $3 id. The column names come from WEBHOOK_FEEDS, never from input. */
export function advanceSql({ txidColumn, idColumn }: WebhookFeed): string {
  return `UPDATE webhook_endpoints SET ${txidColumn} = $2::xid8, ${idColumn} = $3 WHERE id = $1`;
}

/** $1 ids, $2 endpoint, $3 types, $4 bodies, $5 now. */
export const INSERT_EVENTS_SQL = `INSERT INTO webhook_events
  (id, endpoint_id, type, body, created_at, next_attempt_at)
SELECT event.id, $2, event.type, event.body, $5, $5
FROM unnest($1::text[], $3::text[], $4::text[]) AS event(id, type, body)`;

/** Events held while their endpoint was disabled, queued again once it is enabled. */
export const RESUME_PAUSED_SQL = `UPDATE webhook_events
SET state = 'pending', next_attempt_at = $2, lease_until = NULL
WHERE endpoint_id = $1 AND state = 'paused'
RETURNING id`;

// --- Delivery --------------------------------------------------------------------------------

/**
 * Takes the lease of the events (of a batch of jobs) due now whose endpoint is enabled, and
 * counts their attempt: a second holder of a job of the same event finds it leased and does not
 * send it. $1 events, $2 now, $3 lease end.
 */
export const CLAIM_EVENTS_SQL = `UPDATE webhook_events event
SET attempts = event.attempts + 1, lease_until = $3
FROM webhook_endpoints endpoint
WHERE event.id = ANY($1::text[]) AND endpoint.id = event.endpoint_id AND endpoint.enabled
  AND event.state = 'pending' AND event.next_attempt_at <= $2
  AND (event.lease_until IS NULL OR event.lease_until <= $2)
RETURNING event.id, event.endpoint_id, event.attempts, event.body, endpoint.url, endpoint.secret,
  endpoint.previous_secret, endpoint.previous_secret_expires_at, endpoint.failing_since`;

/** The endpoint of each of these events that still exists (a deleted endpoint takes its events). */
export const EVENT_ENDPOINTS_SQL = `SELECT id, endpoint_id FROM webhook_events WHERE id = ANY($1::text[])`;

/**
 * Delivered attempts, of any endpoints, in one statement: each recorded, its event delivered, its
 * endpoint's failing streak ended. $1 events, $2 endpoints, $3 attempt numbers, $4 statuses,
 * $5 durations, $6 excerpts, $7 when each was sent (timestamptz: node-postgres writes a Date with
 * its offset, which a plain timestamp would drop).
 */
export const RECORD_DELIVERED_SQL = `WITH done AS (
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

/** Why an event could not be claimed. */
export const EVENT_STATUS_SQL = `SELECT event.state, event.next_attempt_at, event.lease_until,
  endpoint.enabled
FROM webhook_events event JOIN webhook_endpoints endpoint ON endpoint.id = event.endpoint_id
WHERE event.id = $1`;

/** A pending event of a disabled endpoint waits for `enable` (RESUME_PAUSED_SQL). */
export const PAUSE_EVENT_SQL = `UPDATE webhook_events SET state = 'paused', lease_until = NULL
WHERE id = $1 AND state = 'pending'`;

/** $1 event, $2 endpoint, $3 attempt, $4 time, $5 status, $6 error, $7 duration, $8 excerpt. */
export const RECORD_ATTEMPT_SQL = `INSERT INTO webhook_attempts
  (event_id, endpoint_id, attempt, attempted_at, status, error, duration_ms, response_excerpt)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`;

/** $1 event, $2 state, $3 next attempt (unchanged when null). */
export const SETTLE_EVENT_SQL = `UPDATE webhook_events
SET state = $2, lease_until = NULL, next_attempt_at = coalesce($3, next_attempt_at)
WHERE id = $1`;

/** Starts the failing streak at the first failure; returns when it started. $1 id, $2 now. */
export const ENDPOINT_FAILED_SQL = `UPDATE webhook_endpoints
SET failing_since = coalesce(failing_since, $2) WHERE id = $1
RETURNING failing_since`;

/** $1 id, $2 reason. */
export const DISABLE_ENDPOINT_SQL = `UPDATE webhook_endpoints
SET enabled = false, disabled_reason = $2 WHERE id = $1`;

import { SAFE_BOUND_CTES } from '../../changes/change-feed-sql';
import { type EventType } from '../webhook-events';
import { rowsOf, type PoolOrClient } from '../../database/rows';

// The admin tool's statements: endpoints, their secrets, their latest attempts. The webhooks'
// statements are one file per use (as graphile-worker keeps its src/sql/): these, the dispatcher's
// (worker/sql/dispatch.sql.ts: changes to events) and the delivery worker's (delivery.sql.ts:
// claim, record). Endpoints hold xid8 positions, which Prisma cannot write, so the admin side uses
// SQL too.

/**
 * A new endpoint starts at the feeds' safe bound: every change that can still appear (at or
 * above it) is delivered, none from before it. `(bound, '')` is before every id at the bound.
 * $1 id, $2 workspace, $3 url, $4 event types, $5 sealed secret, $6 now, $7 page patterns (or
 * null).
 */
const CREATE_ENDPOINT_SQL = `WITH ${SAFE_BOUND_CTES}
INSERT INTO webhook_endpoints
  (id, workspace_id, url, event_types, secret, created_at, pages, company_txid, lead_txid,
    visit_txid)
SELECT $1, $2, $3, $4, $5, $6, $7, xmin, xmin, xmin FROM bound
RETURNING id, workspace_id AS "workspaceId", url, event_types AS "eventTypes", pages,
  created_at AS "createdAt"`;

export interface CreatedEndpointRow {
  id: string;
  workspaceId: string;
  url: string;
  eventTypes: EventType[];
  /** The page patterns its visit events must match; null: every visit. */
  pages: string[] | null;
  createdAt: Date;
}

export interface NewEndpoint {
  id: string;
  workspaceId: string;
  url: string;
  eventTypes: EventType[];
  pages: string[] | null;
}

export async function createEndpoint(
  client: PoolOrClient,
  endpoint: NewEndpoint,
  sealedSecret: string,
  now: Date,
): Promise<CreatedEndpointRow> {
  const { id, workspaceId, url, eventTypes, pages } = endpoint;
  const values = [id, workspaceId, url, eventTypes, sealedSecret, now, pages];
  const [created] = await rowsOf<CreatedEndpointRow>(client, CREATE_ENDPOINT_SQL, values);
  return created;
}

/**
 * The endpoints of a workspace, for `webhook list`: never a secret. `failures` counts the
 * attempts since the last success (when failing), `pending` the events not yet delivered.
 */
const LIST_ENDPOINTS_SQL = `SELECT endpoint.id, endpoint.url, endpoint.event_types AS "eventTypes",
  endpoint.pages,
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
  /** The page patterns its visit events must match; null: every visit. */
  pages: string[] | null;
  state: 'enabled' | 'disabled';
  disabledReason: string | null;
  failingSince: Date | null;
  lastSuccessAt: Date | null;
  createdAt: Date;
  failures: number;
  pending: number;
}

export function listEndpoints(
  client: PoolOrClient,
  workspaceId: string,
): Promise<EndpointSummary[]> {
  return rowsOf<EndpointSummary>(client, LIST_ENDPOINTS_SQL, [workspaceId]);
}

/** $1 id, $2 enabled, $3 reason (null to clear). Enabling also forgets the failing streak. */
const SET_ENABLED_SQL = `UPDATE webhook_endpoints
SET enabled = $2, disabled_reason = $3,
  failing_since = CASE WHEN $2 THEN NULL ELSE failing_since END
WHERE id = $1
RETURNING id, enabled`;

/** False when there is no such endpoint. */
export async function setEndpointEnabled(
  client: PoolOrClient,
  id: string,
  enabled: boolean,
  reason: string | null,
): Promise<boolean> {
  return (await rowsOf(client, SET_ENABLED_SQL, [id, enabled, reason])).length > 0;
}

const DELETE_ENDPOINT_SQL = `DELETE FROM webhook_endpoints WHERE id = $1 RETURNING id`;

/** False when there is no such endpoint. */
export async function deleteEndpoint(client: PoolOrClient, id: string): Promise<boolean> {
  return (await rowsOf(client, DELETE_ENDPOINT_SQL, [id])).length > 0;
}

/** $1 id, $2 new sealed secret, $3 its predecessor sealed, $4 until when the old one signs too. */
const ROTATE_SECRET_SQL = `UPDATE webhook_endpoints
SET secret = $2, previous_secret = $3, previous_secret_expires_at = $4
WHERE id = $1
RETURNING id`;

export async function rotateSecret(
  client: PoolOrClient,
  id: string,
  secrets: { sealed: string; previousSealed: string; previousExpiresAt: Date },
): Promise<void> {
  const { sealed, previousSealed, previousExpiresAt } = secrets;
  await client.query(ROTATE_SECRET_SQL, [id, sealed, previousSealed, previousExpiresAt]);
}

const ENDPOINT_SECRET_SQL = `SELECT secret FROM webhook_endpoints WHERE id = $1 FOR UPDATE`;

/** The endpoint's sealed secret, its row locked for the transaction; undefined: no endpoint. */
export async function lockEndpointSecret(
  client: PoolOrClient,
  id: string,
): Promise<string | undefined> {
  const [row] = await rowsOf<{ secret: string }>(client, ENDPOINT_SECRET_SQL, [id]);
  return row?.secret;
}

const ENDPOINT_EXISTS_SQL = `SELECT 1 FROM webhook_endpoints WHERE id = $1`;

export async function endpointExists(client: PoolOrClient, id: string): Promise<boolean> {
  return (await rowsOf(client, ENDPOINT_EXISTS_SQL, [id])).length > 0;
}

const WORKSPACE_EXISTS_SQL = `SELECT 1 FROM workspaces WHERE id = $1`;

export async function workspaceExists(client: PoolOrClient, id: string): Promise<boolean> {
  return (await rowsOf(client, WORKSPACE_EXISTS_SQL, [id])).length > 0;
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

export function latestDeliveries(
  client: PoolOrClient,
  id: string,
  limit: number,
): Promise<DeliveryAttempt[]> {
  return rowsOf<DeliveryAttempt>(client, DELIVERIES_SQL, [id, limit]);
}

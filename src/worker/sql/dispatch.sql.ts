import { feedPageCte, SAFE_BOUND_CTES } from '../../changes/change-feed-sql';
import { itemJsonSql } from '../../items/item-sql';
import { WEBHOOK_FEEDS, type EventType, type WebhookFeed } from '../../webhooks/webhook-events';
import { rowsOf, type PoolOrClient } from '../../database/rows';

// The dispatcher's statements: each endpoint's new changes become events and delivery jobs.

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
  sql: PoolOrClient,
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
  sql: PoolOrClient,
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
  sql: PoolOrClient,
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
  sql: PoolOrClient,
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
export async function resumePaused(
  sql: PoolOrClient,
  endpointId: string,
  now: Date,
): Promise<string[]> {
  const rows = await rowsOf<{ id: string }>(sql, RESUME_PAUSED_SQL, [endpointId, now]);
  return rows.map((row) => row.id);
}

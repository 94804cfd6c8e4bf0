import { feedPageCte, SAFE_BOUND_CTES } from '../../changes/change-feed-sql';
import { itemJsonSql } from '../../items/item-sql';
import { pathInRanges } from '../../items/page-patterns';
import { WEBHOOK_FEEDS, type EventType, type WebhookFeed } from '../../webhooks/webhook-events';
import { rowsOf, type PoolOrClient } from '../../database/rows';

// The dispatcher's statements: each endpoint's new changes become events and delivery jobs.

/**
 * The next enabled endpoint after $1 (by id) that no other dispatcher holds, locked until the
 * transaction that advances its positions commits: two workers never dispatch one endpoint.
 */
const CLAIM_ENDPOINT_SQL = `SELECT id, workspace_id, event_types, pages,
  company_txid::text, company_id, lead_txid::text, lead_id, visit_txid::text, visit_id
FROM webhook_endpoints
WHERE enabled AND id > $1
ORDER BY id
LIMIT 1
FOR UPDATE SKIP LOCKED`;

export interface DispatchedEndpoint {
  id: string;
  workspace_id: string;
  event_types: EventType[];
  /** Its page patterns (items/page-patterns.ts), or null: every visit. */
  pages: string[] | null;
  company_txid: string;
  company_id: string;
  lead_txid: string;
  lead_id: string;
  visit_txid: string;
  visit_id: string;
}

/** In a transaction: the endpoint stays locked until it ends. */
export async function claimEndpointAfter(
  client: PoolOrClient,
  after: string,
): Promise<DispatchedEndpoint | undefined> {
  const [endpoint] = await rowsOf<DispatchedEndpoint>(client, CLAIM_ENDPOINT_SQL, [after]);
  return endpoint;
}

/**
 * The changes of one feed after an endpoint's position and below the safe bound, in the feed's
 * order, each with the item's JSON as the API returns it now (null for a deletion): the feed
 * statement's reading, without the cursor's bookkeeping. $1 workspace, $2 txid, $3 id, $4 limit;
 * a page-filtered feed's (WebhookFeed.pageFiltered) also $5 and $6, the ranges of the endpoint's
 * page patterns (null: every change matches), and $7, the visits' retention in days.
 */
function feedChangesSql(feed: WebhookFeed): string {
  const item = itemJsonSql(feed, 'page.id', feed.partitionKey && `page.${feed.partitionKey}`);
  if (!feed.pageFiltered) {
    return `WITH ${SAFE_BOUND_CTES}, ${feedPageCte(feed)}
SELECT page.id, page.txid::text AS txid, true AS matched,
  CASE WHEN NOT page.deleted THEN ${item}::text END AS item
FROM page
ORDER BY page.txid, page.id`;
  }
  // Only a matching visit's JSON is written: a page-filtered endpoint passes over the others.
  return `WITH ${SAFE_BOUND_CTES}, ${feedPageCte(feed)}, judged AS MATERIALIZED (
  SELECT page.*, ${visitChangeMatches('page')} AS matched
  FROM page
)
SELECT page.id, page.txid::text AS txid, page.matched,
  CASE WHEN page.matched AND NOT page.deleted THEN ${item}::text END AS item
FROM judged page
ORDER BY page.txid, page.id`;
}

/**
 * Whether a visit's change (over the feed's page, aliased `change`) concerns a page view matching
 * the ranges $5 and $6. A live visit: one of its page views as they are now. A deletion: one of
 * the paths recorded with it (migration 20261204000000_visit_webhooks), or any when they are not
 * known. A change recorded live whose visit is gone is a deletion whose paths are not known
 * (the feed reads it as a deletion too, change-feed-sql.ts).
 */
function visitChangeMatches(change: string): string {
  return `($5::text[] IS NULL OR CASE
    WHEN ${change}.deleted THEN coalesce((
      SELECT EXISTS (SELECT FROM unnest(kept.deleted_paths) AS deleted (path)
        WHERE ${pathInRanges('deleted.path', '$5', '$6')})
      FROM visit_changes kept
      WHERE kept.workspace_id = $1 AND kept.id = ${change}.id AND kept.deleted_paths IS NOT NULL
    ), true)
    ELSE EXISTS (SELECT FROM page_views page_row
        WHERE page_row.workspace_id = $1 AND page_row.visit_id = ${change}.id
          AND page_row.visit_started_at = ${change}.started_at
          AND ${pathInRanges('page_row.path', '$5', '$6')})
      OR NOT EXISTS (SELECT FROM visits row
        WHERE row.workspace_id = $1 AND row.id = ${change}.id AND row.started_at = ${change}.started_at)
  END)`;
}

const FEED_CHANGES_SQL = new Map(WEBHOOK_FEEDS.map((feed) => [feed, feedChangesSql(feed)]));

export interface FeedChange {
  id: string;
  txid: string;
  /** Whether the endpoint takes it: false for a visit that matches none of its page patterns. */
  matched: boolean;
  /** The item's JSON as the API returns it now; null for a deletion, or when not matched. */
  item: string | null;
}

/** What a page-filtered feed's statement needs besides the position: see feedChangesSql. */
export interface PageFilter {
  /** The ranges of the endpoint's page patterns, or null without them. */
  ranges: { from: string[]; to: string[] } | null;
  visitRetentionDays: number;
}

/** At most `limit` changes of the feed past the endpoint's position `(txid, id)`. */
export function feedChangesAfter(
  client: PoolOrClient,
  feed: WebhookFeed,
  read: { workspaceId: string; txid: string; id: string; limit: number },
  filter: PageFilter,
): Promise<FeedChange[]> {
  const text = FEED_CHANGES_SQL.get(feed)!;
  const values: unknown[] = [read.workspaceId, read.txid, read.id, read.limit];
  if (feed.pageFiltered) {
    values.push(filter.ranges?.from ?? null, filter.ranges?.to ?? null, filter.visitRetentionDays);
  }
  return rowsOf<FeedChange>(client, text, values);
}

/** $1 endpoint, $2 txid, $3 id. The column names come from WEBHOOK_FEEDS, never from input. */
function advanceSql({ txidColumn, idColumn }: WebhookFeed): string {
  return `UPDATE webhook_endpoints SET ${txidColumn} = $2::xid8, ${idColumn} = $3 WHERE id = $1`;
}

export async function advanceEndpoint(
  client: PoolOrClient,
  feed: WebhookFeed,
  endpointId: string,
  position: { txid: string; id: string },
): Promise<void> {
  await client.query(advanceSql(feed), [endpointId, position.txid, position.id]);
}

/** $1 ids, $2 endpoint, $3 types, $4 bodies, $5 now. */
const INSERT_EVENTS_SQL = `INSERT INTO webhook_events
  (id, endpoint_id, type, body, created_at, next_attempt_at)
SELECT event.id, $2, event.type, event.body, $5, $5
FROM unnest($1::text[], $3::text[], $4::text[]) AS event(id, type, body)`;

export async function insertEvents(
  client: PoolOrClient,
  endpointId: string,
  events: { ids: string[]; types: EventType[]; bodies: string[] },
  now: Date,
): Promise<void> {
  await client.query(INSERT_EVENTS_SQL, [events.ids, endpointId, events.types, events.bodies, now]);
}

/** Events held while their endpoint was disabled, queued again once it is enabled. */
const RESUME_PAUSED_SQL = `UPDATE webhook_events
SET state = 'pending', next_attempt_at = $2, lease_until = NULL
WHERE endpoint_id = $1 AND state = 'paused'
RETURNING id`;

/** The ids of the events queued again. */
export async function resumePaused(
  client: PoolOrClient,
  endpointId: string,
  now: Date,
): Promise<string[]> {
  const rows = await rowsOf<{ id: string }>(client, RESUME_PAUSED_SQL, [endpointId, now]);
  return rows.map((row) => row.id);
}

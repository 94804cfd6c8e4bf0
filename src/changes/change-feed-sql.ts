import { itemJsonSql, type ItemSelect } from '../items/item-sql';
import { isoDateTime } from '../items/fields';

export type Feed = 'companies' | 'leads' | 'visits';

/**
 * A feed page stops adding changes once its data reaches this many bytes, whatever `limit` asked:
 * a page holds at most `limit` changes, and fewer when they are large (the first change always;
 * `hasMore` then says to go on). Ordinary data never reaches it (a page of 1,000 companies with
 * their contacts is about 1 MB), while 1,000 companies at the bounds' maximum would weigh 74 MB
 * (docs/api.md, "Sizes").
 */
export const FEED_PAGE_MAX_BYTES = 4 * 1024 * 1024;

/**
 * Two CTEs, `snapshot` and `bound`: `(SELECT xmin FROM bound)` is the feeds' safe bound, below
 * which no change can still appear (see changeFeedSql). Webhook dispatch reads past it too.
 */
export const SAFE_BOUND_CTES = `snapshot AS MATERIALIZED (
  SELECT pg_current_snapshot() AS taken
), bound AS MATERIALIZED (
  -- On the primary: the oldest transaction still running that could write these tables, else the
  -- snapshot's xmax. A transaction is passed over only when pg_stat_activity shows its backend
  -- connected to another database (where it cannot write here); xids are compared modulo 2^32,
  -- unique among transactions running at once. Unidentified (a prepared transaction, a backend
  -- gone since): it counts.
  -- On a hot standby: the snapshot's xmin, the oldest transaction of the whole primary still
  -- running at the replayed point. There the snapshot lists no running transaction (a standby
  -- keeps them apart from its xip; pg_snapshot_xip is empty) and pg_stat_activity shows the
  -- standby's own sessions, not the primary's writers: the expression above would give the xmax
  -- and pass over transactions still running on the primary.
  SELECT CASE WHEN pg_is_in_recovery()
    THEN pg_snapshot_xmin((SELECT taken FROM snapshot))
    ELSE coalesce(
      (SELECT min(running) FROM pg_snapshot_xip((SELECT taken FROM snapshot)) running
        WHERE NOT EXISTS (
          SELECT FROM pg_stat_activity elsewhere
          WHERE elsewhere.datname <> current_database()
            AND elsewhere.backend_xid::text::numeric = running::text::numeric % 4294967296)),
      pg_snapshot_xmax((SELECT taken FROM snapshot)))
  END AS xmin
)`;

/**
 * The CTE `page` (after SAFE_BOUND_CTES): the changes after the position ($2 txid, $3 id) and below
 * the safe bound, in the feed's order, at most $4, of workspace $1. The feed's pages and webhook
 * dispatch read the same way.
 */
export function feedPageCte(changes: FeedTable, until = ''): string {
  const { changeTable, partitionKey, retained } = changes;
  const kept = retained ? `\n    AND ${retained(changeTable)}` : '';
  return `page AS MATERIALIZED (
  SELECT id, txid, changed_at, deleted${partitionKey ? `, ${partitionKey}` : ''} FROM ${changeTable}
  WHERE workspace_id = $1 AND (txid, id) > ($2::xid8, $3::text)${until}
    AND txid < (SELECT xmin FROM bound)${kept}
  ORDER BY txid, id
  LIMIT $4
)`;
}

/**
 * A feed's table of positions, and what its rows say beyond the position: where the item's row
 * is (a visit's started_at, its partition), and which rows the feed still shows (`retained`: a
 * visit past the retention is left out, not deleted), over the table's alias.
 */
export interface FeedTable {
  /** The table of positions kept by the triggers (migration 20261124000000_change_feeds). */
  changeTable: string;
  partitionKey?: string;
  retained?: (alias: string) => string;
}

export interface ChangeFeedSql extends ItemSelect, FeedTable {
  feed: Feed;
  /** The upsert's property holding the item: `company`, `lead`, `visit`. */
  key: string;
}

/**
 * A page of a change feed in one statement, one snapshot: the changes after the cursor's position
 * (txid, id), in that order, each an upsert with the item as it is now or a delete.
 *
 * Only changes whose transaction id is below a bound are returned: the oldest transaction that
 * was still running when the statement's snapshot was taken (the snapshot's xmin), leaving out
 * the transactions of other databases of the server. Every transaction below the bound has ended,
 * so nothing can still appear below it; every later writer gets a txid at or above it (see the
 * migration). That is what makes the feed lossless whatever the commit order of concurrent
 * writers: a position once passed is never written to again. Committed changes above the bound
 * wait for the older transactions of this database to end; `has_more` counts them, so a client
 * keeps asking instead of believing it has caught up.
 *
 * `expired`: prune-changes removed a deletion record that this client may have missed, one
 * after the cursor's position and written at or after the start of the client's pass. A client
 * held an item only if its pass read it, and a deletion that the pass's reads did not see has a
 * txid at or above the xmin of the pass's first read (`pass`), kept in every cursor of the pass.
 * A fresh pass therefore never expires on what was pruned before it began, while a client that
 * stayed behind the pruned deletions past the retention does. Checked against the per-workspace
 * summary in change_horizons (the greatest pruned position), which can only err towards a 410.
 *
 * A page ends after `limit` changes, or after the change that takes its data to
 * FEED_PAGE_MAX_BYTES: its position (the next cursor) is then that change's.
 *
 * Parameters: $1 workspace id, $2 cursor txid (xid8 as text, '0' at the start), $3 cursor id, $4
 * limit, $5 the pass's start (xid8 as text; null without a cursor: this snapshot's xmin). The
 * body's `data` is returned as JSON text (`array`: the page's array; `lines`: each change on a line
 * of its own, ended by a newline, for the change stream); the service adds the signed cursor.
 *
 * `range` (the change stream's read-ahead, change-stream-pages.ts): the changes up to a position
 * too, $6 txid and $7 id, one that changeBoundariesSql gave; `complete` says whether the page
 * holds the whole range (not cut by FEED_PAGE_MAX_BYTES), and the position is then the range's
 * end, whatever changes of the range have moved on since (a change, once passed, can only move
 * to a later position).
 */
export function changeFeedSql(
  changes: ChangeFeedSql,
  data: 'array' | 'lines' = 'array',
  range = false,
): string {
  const { feed, changeTable, key, partitionKey, retained } = changes;
  const changedAt = isoDateTime('page.changed_at');
  const until = range ? ' AND (txid, id) <= ($6::xid8, $7::text)' : '';
  return `WITH ${SAFE_BOUND_CTES}, ${feedPageCte(changes, until)}, entries AS MATERIALIZED (
  -- Each change as JSON text, written once (materialized: its size is read twice below). An
  -- upsert whose item this snapshot does not hold is a deletion: a transaction that read the
  -- item just before another deleted it can record it live after that deletion (a company
  -- renamed while one of its leads is deleted re-marks the lead), and its position, later than
  -- the deletion's, must not leave a client holding the item.
  SELECT page.txid, page.id, (CASE WHEN state.item IS NULL
      THEN (SELECT row_to_json(deletion) FROM (
        SELECT 'delete' AS op, page.id, ${changedAt} AS "changedAt") deletion)
      ELSE (SELECT row_to_json(upsertion) FROM (
        SELECT 'upsert' AS op, page.id, ${changedAt} AS "changedAt", state.item AS "${key}") upsertion)
    END)::text AS change
  FROM page
  -- OFFSET 0: kept a subquery, so that the item is written once, not once per use of it.
  LEFT JOIN LATERAL (
    SELECT ${itemJsonSql(changes, 'page.id', partitionKey && `page.${partitionKey}`)} AS item
    WHERE NOT page.deleted
    OFFSET 0
  ) state ON true
), kept AS MATERIALIZED (
  -- The changes that start before the page's data reaches FEED_PAGE_MAX_BYTES.
  SELECT txid, id, change FROM (
    SELECT txid, id, change,
      sum(octet_length(change)) OVER (ORDER BY txid, id ROWS UNBOUNDED PRECEDING)
        - octet_length(change) AS before
    FROM entries
  ) sized
  WHERE before < ${FEED_PAGE_MAX_BYTES}
), last AS (
  SELECT txid, id FROM kept ORDER BY txid DESC, id DESC LIMIT 1
), ${range ? RANGE_POSITION : PAGE_POSITION}
SELECT
  EXISTS (SELECT FROM change_horizons horizon
    WHERE horizon.workspace_id = $1 AND horizon.feed = '${feed}'
      AND ($2::xid8, $3::text) < (horizon.pruned_txid, horizon.pruned_id)
      AND horizon.pruned_txid >= coalesce($5::xid8, (SELECT xmin FROM bound))) AS expired,
  coalesce($5::xid8, (SELECT xmin FROM bound))::text AS pass,
  (SELECT txid::text FROM position) AS txid,
  (SELECT id FROM position) AS id,${range ? '\n  (SELECT complete FROM position) AS complete,' : ''}
  -- More after the page: the workspace's greatest position, one entry read from the end of the
  -- index. (An EXISTS over the positions after the page was planned as a sequential scan.)
  (SELECT (latest.txid, latest.id) > ((SELECT txid FROM position), (SELECT id FROM position))
    FROM ${changeTable} latest WHERE latest.workspace_id = $1${retained ? ` AND ${retained('latest')}` : ''}
    ORDER BY latest.txid DESC, latest.id DESC LIMIT 1) IS TRUE AS has_more,
  ${data === 'array' ? ARRAY_DATA : LINES_DATA}
    AS data`;
}

const PAGE_POSITION = `position AS (
  SELECT coalesce((SELECT txid FROM last), $2::xid8) AS txid,
    coalesce((SELECT id FROM last), $3::text) AS id
)`;

const RANGE_POSITION = `whole AS (
  SELECT (SELECT count(*) FROM kept) = (SELECT count(*) FROM entries) AS complete
), position AS (
  SELECT CASE WHEN (SELECT complete FROM whole) THEN $6::xid8 ELSE (SELECT txid FROM last) END
      AS txid,
    CASE WHEN (SELECT complete FROM whole) THEN $7::text ELSE (SELECT id FROM last) END AS id,
    (SELECT complete FROM whole) AS complete
)`;

/**
 * Where the next `$5` pages of at most `$4` changes each end, after the position ($2 txid, $3 id)
 * and below the safe bound: the position of every `$4`-th change, and of the last one. Read from
 * the feed's index alone, so that pages far ahead can be read at once, each by its range.
 */
export function changeBoundariesSql({ changeTable, retained }: FeedTable): string {
  return `WITH ${SAFE_BOUND_CTES}, ahead AS MATERIALIZED (
  SELECT txid, id, row_number() OVER (ORDER BY txid, id) AS n FROM (
    SELECT txid, id FROM ${changeTable}
    WHERE workspace_id = $1 AND (txid, id) > ($2::xid8, $3::text)
      AND txid < (SELECT xmin FROM bound)${retained ? ` AND ${retained(changeTable)}` : ''}
    ORDER BY txid, id
    LIMIT $4::bigint * $5::bigint
  ) positions
)
SELECT txid::text AS txid, id FROM ahead
WHERE n % $4 = 0 OR n = (SELECT max(n) FROM ahead)
ORDER BY n`;
}

const ARRAY_DATA = `-- As array_to_json writes an array of JSON values: commas, no spaces.
  coalesce((SELECT '[' || string_agg(change, ',' ORDER BY txid, id) || ']' FROM kept), '[]')`;

const LINES_DATA = `-- One change a line, each ended by a newline (NDJSON): PostgreSQL writes JSON compact,
  -- with no newline of its own.
  coalesce((SELECT string_agg(change || E'\\n', '' ORDER BY txid, id) FROM kept), '')`;

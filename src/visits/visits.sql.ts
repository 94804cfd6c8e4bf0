import { changeBoundariesSql, type ChangeFeedSql, changeFeedSql } from '../changes/change-feed-sql';
import type { StreamedFeed } from '../changes/stream/change-streams';
import { sizedSql } from '../items/body-budget';
import { BySelection, pickFields, type Selection } from '../items/field-selection';
import { isoDateTime, selectList } from '../items/fields';
import type { ItemSelect } from '../items/item-sql';
import { pathsInRanges } from '../items/page-patterns';
import { PAGE_VIEW_FIELDS, VISIT_FIELDS } from './visit.fields';

/**
 * A visit page stops adding visits once its data reaches this many bytes, whatever `limit`
 * asked, as a feed page does (change-feed-sql.ts): a visit may hold 500 page views, and 200 visits
 * at the bounds' maximum would weigh gigabytes (docs/api.md, "Sizes"). The first visit always
 * comes; `hasMore` then says to go on.
 */
export const VISIT_PAGE_MAX_BYTES = 4 * 1024 * 1024;

/** The visits a read may return: those that started within the retention (`$2`, days). */
const WITHIN_RETENTION = 'row.started_at >= now() - make_interval(days => $2::integer)';

const PAGES_OF_ROW =
  'page_row.workspace_id = row.workspace_id AND page_row.visit_id = row.id ' +
  'AND page_row.visit_started_at = row.started_at';

/**
 * One visit as the API shows it, pages included, over its row aliased `row`: lists and single
 * reads alike. With a selection (`fields`), only its fields; the pages only when selected, each
 * with only its selected fields, in their order (`viewedAt`, ties as given: `position`).
 */
export function visitItem(selection?: Selection): ItemSelect {
  const fields = selection ? pickFields(VISIT_FIELDS, selection.fields) : VISIT_FIELDS;
  const pages = selection ? selection.lists.pages : Object.keys(PAGE_VIEW_FIELDS);
  const items = [selectList(fields, 'row')];
  if (pages !== undefined) {
    items.push(`coalesce(
      (SELECT array_to_json(array_agg(
          (SELECT row_to_json(page) FROM (SELECT ${selectList(pickFields(PAGE_VIEW_FIELDS, pages), 'page_row')}) page)
          ORDER BY page_row.position))
        FROM page_views page_row
        WHERE ${PAGES_OF_ROW}),
      '[]'
    ) AS pages`);
  }
  return { table: 'visits', item: items.join(',\n    ') };
}

/** Which visits a list holds: all of the workspace's, or one company's (`$8[1]`). */
export type VisitListScope = 'workspace' | 'company';

/**
 * A page of visits in one statement, one snapshot, newest first (startedAt descending, then id
 * descending, byte order), keyset-paged: the visits after the cursor's position ($5, $6) that
 * match the filters, read backwards from the order index (or the company's), so that a page deep
 * in a long window costs what the first one does. The partitions before `since` and the retention
 * are never read (pruned when the statement starts). The page patterns' page views come from the
 * path index, a range of the workspace's per pattern (the workspace bound as $1, not taken from
 * the visit: the planner may hash them, and a condition on the visit's column would then read
 * every workspace's page views), or the visit's own, from the key.
 *
 * A condition on a null parameter folds away when the statement is planned (node-postgres sends
 * unnamed statements, which PostgreSQL plans with their values): one text serves every
 * combination of filters, and the planner sees only the conditions that apply.
 *
 * Parameters: $1 workspace id, $2 retention in days, $3 since, $4 until (timestamptz or null), $5
 * the cursor's startedAt and $6 its id (or null), $7 limit, $8 company ids (text[] or null), $9 and
 * $10 the page patterns' ranges (items/page-patterns.ts; text[] or null). The service signs the
 * cursor: the statement returns the page's last position (`last_started_at`, `last_id`).
 * `company_found` (scope 'company'): whether the workspace has the company $8[1].
 */
export function visitListSql(item: ItemSelect, scope: VisitListScope): string {
  const company =
    scope === 'company'
      ? `,
  EXISTS (SELECT FROM companies WHERE workspace_id = $1 AND id = ($8::text[])[1]) AS company_found`
      : '';
  return `WITH page AS MATERIALIZED (
  -- One visit more than the limit: whether there is more.
  SELECT row.* FROM visits row
  WHERE row.workspace_id = $1 AND ${WITHIN_RETENTION}
    AND ($3::timestamptz IS NULL OR row.started_at >= $3::timestamptz)
    AND ($4::timestamptz IS NULL OR row.started_at < $4::timestamptz)
    AND ($5::timestamptz IS NULL OR (row.started_at, row.id) < ($5::timestamptz, $6::text))
    AND ($8::text[] IS NULL OR row.company_id = ANY($8::text[]))
    AND ($9::text[] IS NULL OR EXISTS (
      SELECT FROM ${pathsInRanges('$9', '$10')} page
      WHERE page.workspace_id = $1 AND page.visit_id = row.id
        AND page.visit_started_at = row.started_at))
  ORDER BY row.started_at DESC, row.id DESC
  LIMIT $7::integer + 1
), entries AS MATERIALIZED (
  -- Each visit as JSON text, written once (its size is read twice below).
  SELECT row.started_at, row.id,
    (SELECT row_to_json(item) FROM (SELECT ${item.item}) item)::text AS visit
  FROM (SELECT * FROM page ORDER BY started_at DESC, id DESC LIMIT $7::integer) row
), kept AS MATERIALIZED (
  -- The visits that start before the page's data reaches VISIT_PAGE_MAX_BYTES.
  SELECT started_at, id, visit FROM (
    SELECT started_at, id, visit,
      sum(octet_length(visit)) OVER (ORDER BY started_at DESC, id DESC ROWS UNBOUNDED PRECEDING)
        - octet_length(visit) AS before
    FROM entries
  ) sized
  WHERE before < ${VISIT_PAGE_MAX_BYTES}
), last AS (
  SELECT started_at, id FROM kept ORDER BY started_at, id LIMIT 1
)
SELECT
  (SELECT count(*) FROM page) > (SELECT count(*) FROM kept) AS has_more,
  (SELECT ${isoDateTime('started_at')} FROM last) AS last_started_at,
  (SELECT id FROM last) AS last_id${company},
  -- As array_to_json writes an array of JSON values: commas, no spaces.
  coalesce((SELECT '[' || string_agg(visit, ',' ORDER BY started_at DESC, id DESC) || ']'
    FROM kept), '[]') AS data`;
}

/**
 * One visit of the workspace within the retention, or no row: $1 workspace id, $2 retention in
 * days, $3 visit id. An id of another workspace finds no row, exactly like one that does not
 * exist. Every partition's primary key is probed (the id alone does not say which month).
 */
export function visitSql(item: ItemSelect): string {
  return `SELECT (SELECT row_to_json(item) FROM (SELECT ${item.item}) item)::text AS body
FROM visits row
WHERE row.workspace_id = $1 AND row.id = $3::text AND ${WITHIN_RETENTION}`;
}

/** A visit read's statements, for one selection of fields, each run sized (body-budget.ts). */
export interface VisitStatements {
  list: string;
  companyList: string;
  item: string;
}

// The list's cap is bound after its ten parameters, the item's after its three.
const LIST_COLUMNS = ['has_more', 'last_started_at', 'last_id'];

export const VISIT_STATEMENTS = new BySelection<VisitStatements>('visits', (selection) => {
  const item = visitItem(selection);
  return {
    list: sizedSql(visitListSql(item, 'workspace'), 'data', LIST_COLUMNS, 11),
    companyList: sizedSql(
      visitListSql(item, 'company'),
      'data',
      [...LIST_COLUMNS, 'company_found'],
      11,
    ),
    item: sizedSql(visitSql(item), 'body', [], 4),
  };
});

/** A visit's change feed statements, for one selection of fields (change-feed-sql.ts). */
export interface VisitChangeStatements {
  /** A page of the feed. */
  changes: string;
  /** The change stream's (change-streams.ts). */
  stream: Omit<StreamedFeed, 'feed'>;
}

/**
 * The visits' change feed (migration 20261203000000_visit_changes): the feed's statements over
 * visit_changes, each visit looked up in its month (the change row's started_at), the visits past
 * the retention left out. The retention is part of the text (a whole number of days from the
 * validated configuration), since the feed's parameters are the other feeds'.
 */
export function visitChangeStatements(retentionDays: number): BySelection<VisitChangeStatements> {
  const days = Math.trunc(retentionDays);
  return new BySelection('visit-changes', (selection) => {
    const feed: ChangeFeedSql = {
      ...visitItem(selection),
      partitionKey: 'started_at',
      feed: 'visits',
      changeTable: 'visit_changes',
      key: 'visit',
      retained: (alias) => `${alias}.started_at >= now() - interval '${days} days'`,
    };
    return {
      changes: changeFeedSql(feed),
      stream: {
        lines: changeFeedSql(feed, 'lines'),
        range: changeFeedSql(feed, 'lines', true),
        boundaries: changeBoundariesSql(feed),
      },
    };
  });
}

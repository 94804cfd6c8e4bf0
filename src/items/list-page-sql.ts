import type { FilterSql } from './filters';
import { DATA_VERSION_SQL, itemJsonSql, type ItemSelect } from './item-sql';

/**
 * The SQL of both lists: one statement per request that returns the whole response body, total
 * and page, as JSON text written by PostgreSQL.
 *
 * - One statement is one round trip and one snapshot, so `total` and the page always agree, with
 *   no transaction to open and close.
 * - The page's ids come first from the covering order index alone ("deferred join"): an `offset`
 *   skips index entries, never table rows, and only the rows of the page are read. Since the
 *   total is exact and known first, a page past the middle is read from the end of the index
 *   (backwards), so that no page skips more than half of the matching entries.
 * - `total` is exact at a cost that does not grow with the workspace: the per-day counts kept by
 *   triggers (migration 20261123000000_list_totals), plus, with `since`, a count of the rows of
 *   since's own UTC day that are at or after it. That day ends 24 hours after it starts, not "one
 *   day" later, which in a session zone with daylight saving could mean 23 or 25 hours.
 * - The workspace's data version comes with the body, from the same snapshot: the ETag.
 * - PostgreSQL writes the JSON (compact: row_to_json and array_to_json), so the service sends the
 *   bytes it gets instead of building and serializing objects.
 *
 * - With filters (filters.ts), `total` is the sum of the matching counts per combination of
 *   filtered values, kept by triggers without any writer waiting on another (migration
 *   20261129000000_list_filters: base counts and recent deltas): a few thousand rows at most,
 *   where counting the matching rows of a million-company workspace took 200 ms. A `minIntentScore` with a fraction takes off the rows
 *   of its own whole point that are below it, counted from the filter index. With `since` too,
 *   the matching rows are counted (the filter counts have no days), from that index alone.
 * - The filter index holds every filtered column, so a filtered page's ids come from it alone,
 *   and a `minIntentScore` bounds the range read, since the index starts with the score.
 * - The lookups (`domain`, `q`: filters the counts do not know) find their rows from their own
 *   indexes, once, then count and rank them (matchedPage below): their cost grows with the
 *   matches, not with the workspace.
 * - `visitedPage` finds its companies in a table of their own (visited_paths, FilterSql.found):
 *   `total` is counted there, and the page walks the order index probing it, or fetches the
 *   companies found, whichever costs less (foundPage below).
 *
 * Parameters: $1 workspace id, $2 since (timestamptz or null), $3 limit, $4 offset, then the
 * given filters' values in their declaration's order. Values are always bound, never spliced into
 * the text. The benchmark's bare server and pgbench run the unfiltered text.
 */
export interface ListPageSql extends ItemSelect {
  /** The timestamp column `since` filters on, counted per day in `countTable`. */
  sinceColumn: string;
  countTable: string;
  /** The count's column in `countTable` and in `filterCountTable`. */
  countColumn: string;
  /** The counts per combination of filtered values (filters.ts): the folded base, and the
   *  deltas of the transactions not folded yet (migration list_filters); a total sums both. */
  filterCountTable: string;
  filterDeltaTable: string;
}

export function listPageSql(list: ListPageSql, filters: FilterSql[] = []): string {
  const base = `workspace_id = $1 AND ($2::timestamptz IS NULL OR ${list.sinceColumn} >= $2)`;
  const matching = [base, ...filters.map((filter) => filter.rows)].join(' AND ');
  const found = filters.find((filter) => filter.found !== undefined)?.found;
  const ranked = filters.some((filter) => filter.counts === undefined && filter.found === undefined)
    ? matchedPage(list.table, matching)
    : found !== undefined
      ? foundPage(list, filters, base, matching, found)
      : countedPage(list, filters, matching);
  return `WITH ${ranked}
SELECT row_to_json(envelope)::text AS body, ${DATA_VERSION_SQL} AS version FROM (
  SELECT
    (SELECT n FROM total) AS total,
    $3::integer AS "limit",
    $4::bigint AS "offset",
    coalesce(
      (SELECT array_to_json(array_agg(${itemJsonSql(list, 'page.id')}
          ORDER BY page.intent_score DESC, page.id))
        FROM page),
      '[]'
    ) AS data
) envelope`;
}

/** `total` from the counts, and the page's ids from the order index alone (see above). */
function countedPage(list: ListPageSql, filters: FilterSql[], matching: string): string {
  const { table, sinceColumn, countTable, countColumn } = list;
  const total =
    filters.length > 0
      ? filteredTotal(list, filters, matching)
      : `SELECT (
    (SELECT coalesce(sum(${countColumn}), 0) FROM ${countTable}
      WHERE workspace_id = $1 AND ($2::timestamptz IS NULL OR day > count_day($2)))
    + (SELECT count(*) FROM ${table}
      WHERE $2::timestamptz IS NOT NULL AND workspace_id = $1
        AND ${sinceColumn} >= $2 AND ${sinceColumn} < count_day($2) + interval '24 hours')
  )::bigint AS n`;
  return `total AS (
  ${total}
), page AS (
  -- The outer LIMIT changes no result: it tells the planner a page is small (the second branch's
  -- own LIMIT is only known when it runs), so the page's rows are fetched by id, not hashed.
  SELECT * FROM (${fromBothEnds(table, matching)}
  ) both_ends LIMIT $3
)`;
}

/**
 * The page's ids from the order index (when `walk` holds, if given): from the top for a page in
 * the upper half of the `total` matches, else backwards from the end (see above).
 */
function fromBothEnds(table: string, matching: string, walk?: string): string {
  // Skipping $4 rows from the top costs as much as skipping total - $4 - $3 from the bottom
  // costs the other way: a page in the lower half is read backwards from the end of the index.
  const fromTheTop = '2 * $4::bigint + $3 <= (SELECT n FROM total)';
  const where = walk === undefined ? matching : `${matching} AND ${walk}`;
  return `
  (SELECT id, intent_score FROM ${table}
    WHERE ${where} AND ${fromTheTop}
    ORDER BY intent_score DESC, id
    LIMIT $3 OFFSET $4)
  UNION ALL
  (SELECT id, intent_score FROM ${table}
    WHERE ${where} AND NOT (${fromTheTop})
    ORDER BY intent_score, id DESC
    LIMIT greatest(least($3, (SELECT n FROM total) - $4::bigint), 0)
    OFFSET greatest((SELECT n FROM total) - $4::bigint - $3, 0))`;
}

/**
 * `total` and the page with a filter whose matches a table of its own holds (FilterSql.found:
 * visitedPage). Alone and without `since`, `total` is that table's count; otherwise the items
 * that match every filter are counted, each probing the table once. The page then either walks
 * the order index, probing each item, or fetches the found items and ranks them: walking costs
 * about (offset + limit) x items / total probes, fetching about total lookups, so it walks when
 * total^2 reaches (offset + limit) x the workspace's items (from the per-day counts). The branch
 * not taken is not run (a condition on `total` alone, checked once).
 */
function foundPage(
  list: ListPageSql,
  filters: FilterSql[],
  base: string,
  matching: string,
  found: NonNullable<FilterSql['found']>,
): string {
  const { table, countTable, countColumn } = list;
  // A company found matches the filter already: its row is checked against the others only.
  const others = [base, ...filters.filter((f) => f.found === undefined).map((f) => f.rows)].join(
    ' AND ',
  );
  const counted = `SELECT count(*) FROM ${table} WHERE ${matching}`;
  const total =
    filters.length === 1
      ? `CASE WHEN $2::timestamptz IS NULL THEN ${found.count} ELSE (${counted}) END`
      : `(${counted})`;
  const walk = `(SELECT n FROM total) * (SELECT n FROM total)
      >= ($4::bigint + $3) * (SELECT coalesce(sum(${countColumn}), 0) FROM ${countTable}
        WHERE workspace_id = $1)`;
  return `total AS (
  SELECT (${total})::bigint AS n
), page AS (
  SELECT * FROM (${fromBothEnds(table, matching, walk)}
  UNION ALL
  (SELECT item.id, item.intent_score FROM (${found.ids}) found_item,
    LATERAL (SELECT id, intent_score FROM ${table}
      WHERE ${others} AND ${found.column} = found_item.company_id OFFSET 0) item
    WHERE NOT (${walk})
    ORDER BY item.intent_score DESC, item.id
    LIMIT $3 OFFSET $4)
  ) either LIMIT $3
)`;
}

/**
 * `total` and the page with a filter that the counts do not know (`domain`, `q`): the matching
 * rows are found once, from that filter's index, then counted and ranked. Walking the order index
 * instead would read every row of the workspace when few match; and the total counts them anyway.
 */
function matchedPage(table: string, matching: string): string {
  return `matching AS MATERIALIZED (
  SELECT id, intent_score FROM ${table} WHERE ${matching}
), total AS (
  SELECT count(*)::bigint AS n FROM matching
), page AS (
  SELECT id, intent_score FROM matching ORDER BY intent_score DESC, id LIMIT $3 OFFSET $4
)`;
}

/** The `total` of a filtered list (see above): summed from the filter counts, or counted with `since`. */
function filteredTotal(list: ListPageSql, filters: FilterSql[], matching: string): string {
  const { table, countColumn, filterCountTable, filterDeltaTable } = list;
  const counted = filters.map((filter) => filter.counts).join(' AND ');
  const partials = filters.flatMap((filter, i) => {
    if (filter.partial === undefined) return [];
    const others = filters.filter((_, j) => j !== i).map((other) => other.rows);
    const conditions = ['workspace_id = $1', ...others, filter.partial].join(' AND ');
    return [`\n      - (SELECT count(*) FROM ${table} WHERE ${conditions})`];
  });
  return `SELECT (CASE WHEN $2::timestamptz IS NULL THEN
      (SELECT coalesce(sum(${countColumn}), 0) FROM ${filterCountTable}
        WHERE workspace_id = $1 AND ${counted})
      + (SELECT coalesce(sum(${countColumn}), 0) FROM ${filterDeltaTable}
        WHERE workspace_id = $1 AND ${counted})${partials.join('')}
    ELSE (SELECT count(*) FROM ${table} WHERE ${matching}) END)::bigint AS n`;
}

import type { Queryable } from '../database/queryable';
import { jsonText, type VersionedJson } from '../http/json-text';
import { isPossibleId } from './fields';

/**
 * How one item of a table is written as JSON. Lists, change feeds, single reads and webhook events
 * all write it through itemJsonSql, so that an item reads the same wherever it comes from.
 */
export interface ItemSelect {
  /** The item's table, e.g. companies. */
  table: string;
  /** SELECT list of one item, fields in the contract's order, over its row aliased `row`. */
  item: string;
  /** Joins the item needs beyond the row, e.g. a lead's company. */
  joins?: string;
  /**
   * The column of a partitioned table that says which partition holds the row (a visit's
   * started_at): a lookup by id that knows it reads one partition, not every one.
   */
  partitionKey?: string;
}

/**
 * A scalar subquery: the JSON of the item `id` (an SQL expression) of workspace $1, or null when
 * that workspace has no such item. Used per row of a page, it stays a subquery that the planner
 * cannot turn into a join (a join hashed the whole table for a page of 200: 36 ms instead of 1;
 * test/e2e/database/query-plans.e2e-spec.ts pins it).
 */
export function itemJsonSql(
  { table, item, joins = '', partitionKey }: ItemSelect,
  id: string,
  partition?: string,
): string {
  const where = partitionKey && partition ? ` AND row.${partitionKey} = ${partition}` : '';
  return `(SELECT row_to_json(item) FROM ${table} row ${joins}
    CROSS JOIN LATERAL (SELECT ${item}) item
    WHERE row.workspace_id = $1 AND row.id = ${id}${where})`;
}

/**
 * One item by id, as JSON text written by PostgreSQL, the same object as in the lists. Scoped by
 * the workspace in the statement itself: an id of another workspace finds no row, exactly like
 * an id that does not exist. With the workspace's data version, for the ETag. Parameters: $1
 * workspace id, $2 item id.
 */
export function itemSql(select: ItemSelect): string {
  return `SELECT body, version FROM (SELECT ${itemJsonSql(select, '$2')}::text AS body,
  ${DATA_VERSION_SQL} AS version) found
WHERE body IS NOT NULL`;
}

/**
 * The version of workspace $1's data, as text: how many transactions that wrote its data have
 * committed (migration 20261129100000_data_versions), read in
 * the same statement as a body so that the two come from one snapshot: the ETag of a list or an
 * item (http/conditional-requests.ts).
 */
export const DATA_VERSION_SQL = `((SELECT coalesce(max(writes), 0) FROM workspace_write_counts
    WHERE workspace_id = $1)
  + (SELECT count(*) FROM workspace_writes WHERE workspace_id = $1))::text`;

/** The version alone: what a conditional request reads first (items/conditional-read.guard.ts). */
export const DATA_VERSION_STATEMENT = `SELECT ${DATA_VERSION_SQL} AS version`;

/**
 * Runs a single-item statement (itemSql): the item's JSON, or null when not in the workspace.
 * An id that no item can have (isPossibleId) is null without a query.
 */
export async function itemById<T>(
  database: Queryable,
  sql: string,
  workspaceId: string,
  id: string,
): Promise<VersionedJson<T> | null> {
  if (!isPossibleId(id)) return null;
  const [row] = await database.query<{ body: string; version: string }>(sql, [workspaceId, id]);
  return row ? { json: jsonText<T>(row.body), version: row.version } : null;
}

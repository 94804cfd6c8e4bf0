import type { ItemSelect } from './list-page-sql';

/**
 * One item by id, as JSON text written by PostgreSQL, the same object as in the lists. Scoped by
 * the workspace in the statement itself: an id of another workspace finds no row, exactly like
 * an id that does not exist. Parameters: $1 workspace id, $2 item id.
 */
export function itemSql({ table, item, joins = '' }: ItemSelect): string {
  return `SELECT row_to_json(item)::text AS body
FROM ${table} row ${joins}
CROSS JOIN LATERAL (SELECT ${item}) item
WHERE row.workspace_id = $1 AND row.id = $2`;
}

import type { Queryable } from '../database/queryable';
import { type JsonText, jsonText } from '../http/json-text';
import type { ListQueryDto } from '../http/list-query.dto';

/** Runs a list's statement (list-page-sql.ts): the response body as PostgreSQL wrote it. */
export async function listPage<T>(
  database: Queryable,
  sql: string,
  workspaceId: string,
  { since, limit, offset }: ListQueryDto,
): Promise<JsonText<T>> {
  const [row] = await database.query<{ body: string }>(sql, [
    workspaceId,
    since ?? null,
    limit,
    offset,
  ]);
  return jsonText<T>(row.body);
}

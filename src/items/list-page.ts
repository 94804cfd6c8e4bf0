import type { Queryable } from '../database/queryable';
import { type JsonText, jsonText } from '../http/json-text';
import type { ListQueryDto } from '../http/list-query.dto';
import { type BodyBudget, sizedSql } from './body-budget';

/** Where a large body's heap is reserved (body-budget.ts), and under which key it is remembered. */
export interface BodyRoom {
  budget: BodyBudget;
  key: string;
}

const sized = new Map<string, string>();

/** A list statement run sized: its body only up to a cap ($5, bytes, or null: any size). */
export function sizedListSql(sql: string): string {
  let text = sized.get(sql);
  if (text === undefined) {
    text = sizedSql(sql, 'body', [], 5);
    sized.set(sql, text);
  }
  return text;
}

/**
 * Runs a list's statement (list-page-sql.ts): the response body as PostgreSQL wrote it. With
 * `room`, sized: a large body is read only once its heap is reserved (body-budget.ts).
 */
export async function listPage<T>(
  database: Queryable,
  sql: string,
  workspaceId: string,
  { since, limit, offset }: ListQueryDto,
  room?: BodyRoom,
): Promise<JsonText<T>> {
  const values = [workspaceId, since ?? null, limit, offset];
  if (room === undefined) {
    const [row] = await database.query<{ body: string }>(sql, values);
    return jsonText<T>(row.body);
  }
  const row = await room.budget.read(
    room.key,
    async (cap) =>
      (
        await database.query<{ body: string | null; bytes: number }>(sizedListSql(sql), [
          ...values,
          cap,
        ])
      )[0],
    (found) => found.body,
  );
  return jsonText<T>(row?.body as string);
}

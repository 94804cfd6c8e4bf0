import { GoneException } from '@nestjs/common';
import { type JsonText, jsonText, type VersionedJson } from '../http/json-text';
import type { Queryable } from '../database/queryable';
import { sizedSql } from '../items/body-budget';
import { isPossibleId } from '../items/fields';
import type { BodyRoom } from '../items/list-page';
import type { ChangeCursors } from './change-cursor';
import type { Feed } from './change-feed-sql';
import type { ChangesQueryDto } from './changes-query.dto';

/** The body of a feed page: `data` holds one feed's upserts and deletes. */
export interface ChangePage<T> {
  data: T[];
  nextCursor: string;
  hasMore: boolean;
}

interface FeedRow {
  expired: boolean;
  pass: string;
  txid: string;
  id: string;
  has_more: boolean;
  /** Null once taken by `envelope`, or from a sized statement whose page was over its cap. */
  data: string | null;
}

export const CURSOR_EXPIRED = 'cursor has expired: start again without a cursor';

const sized = new Map<string, string>();

/** A feed statement run sized (body-budget.ts): its `data` only up to a cap ($6, or null). */
export function sizedFeedSql(sql: string): string {
  let text = sized.get(sql);
  if (text === undefined) {
    text = sizedSql(sql, 'data', ['expired', 'pass', 'txid', 'id', 'has_more'], 6);
    sized.set(sql, text);
  }
  return text;
}

/**
 * Runs a feed's statement (change-feed-sql.ts) and adds the signed cursor to its JSON. With
 * `room`, sized: a large page is read only once its heap is reserved (body-budget.ts).
 */
export async function changeFeedPage<T>(
  database: Queryable,
  cursors: ChangeCursors,
  sql: string,
  feed: Feed,
  workspaceId: string,
  { cursor, limit }: ChangesQueryDto,
  room?: BodyRoom,
): Promise<JsonText<ChangePage<T>>> {
  // Without a cursor: before every position, and the pass starts with this read.
  const from =
    cursor === undefined
      ? { txid: '0', id: '', pass: null }
      : cursors.decode(feed, workspaceId, cursor);
  const values = [workspaceId, from.txid, from.id, limit, from.pass];
  const row =
    room === undefined
      ? (await database.query<FeedRow>(sql, values))[0]
      : await room.budget.read(
          room.key,
          async (cap) =>
            (
              await database.query<FeedRow & { bytes: number }>(sizedFeedSql(sql), [...values, cap])
            )[0],
          (found) => found.data,
        );
  if (row === undefined) throw new Error('the feed statement returned no row');
  if (row.expired) throw new GoneException(CURSOR_EXPIRED);
  const nextCursor = cursors.encode(feed, workspaceId, row);
  return jsonText(envelope(row, nextCursor));
}

/**
 * `{"data":...,"nextCursor":...,"hasMore":...}` in one flat string. Written as a template literal
 * it would be a rope over `data`, which Express flattens into a copy before encoding it: twice the
 * heap of a large page for a moment. Assembled as bytes outside the heap instead, `data` dropped
 * from the row first, so that only the final string is on the heap (body-budget.ts counts one).
 */
function envelope(row: FeedRow, nextCursor: string): string {
  const data = Buffer.from(row.data as string, 'utf8');
  row.data = null;
  return Buffer.concat([
    Buffer.from('{"data":'),
    data,
    Buffer.from(`,"nextCursor":${JSON.stringify(nextCursor)},"hasMore":${row.has_more}}`),
  ]).toString('utf8');
}

/**
 * Runs a single-item statement (item-sql.ts): the item's JSON, or null when not in the workspace.
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

import { GoneException } from '@nestjs/common';
import { type JsonText, jsonText } from '../http/json-text';
import type { Queryable } from '../database/queryable';
import { type BodyRoom, sizedSql } from '../items/body-budget';
import type { ChangeCursors, ChangePosition } from './change-cursor';
import type { Feed } from './change-feed-sql';
import type { ChangesQueryDto } from './changes-query.dto';

/** The body of a feed page: `data` holds one feed's upserts and deletes. */
export interface ChangePage<T> {
  data: T[];
  nextCursor: string;
  hasMore: boolean;
}

/** A feed statement's row: the page's position and data, and whether the cursor expired. */
export interface FeedRow {
  expired: boolean;
  pass: string;
  txid: string;
  id: string;
  has_more: boolean;
  /** A range's read (changeFeedSql's `range`): whether it holds the whole range. */
  complete?: boolean;
  /** Null once taken by `envelope`, or from a sized statement whose page was over its cap. */
  data: string | null;
}

export const CURSOR_EXPIRED = 'cursor has expired: start again without a cursor';

const sized = new Map<string, string>();

/**
 * A feed statement run sized (body-budget.ts): its `data` only up to a cap, its parameter after
 * the statement's own (`$6` of a page, `$8` of a range, or null).
 */
export function sizedFeedSql(sql: string, capParameter = 6): string {
  let text = sized.get(sql);
  if (text === undefined) {
    const columns = ['expired', 'pass', 'txid', 'id', 'has_more'];
    if (capParameter === 8) columns.push('complete');
    text = sizedSql(sql, 'data', columns, capParameter);
    sized.set(sql, text);
  }
  return text;
}

/** A page of a feed (change-feed-sql.ts) after the query's cursor, with its signed cursor. */
export async function changeFeedPage<T>(
  database: Queryable,
  cursors: ChangeCursors,
  sql: string,
  feed: Feed,
  workspaceId: string,
  { cursor, limit }: ChangesQueryDto,
  room?: BodyRoom,
): Promise<JsonText<ChangePage<T>>> {
  const from = startOf(cursors, feed, workspaceId, cursor);
  const row = await readFeedRow(database, sql, workspaceId, from, limit, room);
  const nextCursor = cursors.encode(feed, workspaceId, row);
  return jsonText(envelope(row, nextCursor));
}

/** Where a read starts: the cursor's position, or before every position (a new pass). */
export type FeedStart = Omit<ChangePosition, 'pass'> & { pass: string | null };

/** The position of `cursor` (a 400 when it is not this feed's and workspace's), or the start. */
export function startOf(
  cursors: ChangeCursors,
  feed: Feed,
  workspaceId: string,
  cursor: string | undefined,
): FeedStart {
  // Without a cursor: before every position, and the pass starts with this read.
  return cursor === undefined
    ? { txid: '0', id: '', pass: null }
    : cursors.decode(feed, workspaceId, cursor);
}

/**
 * Runs a feed's statement after `from` (and, for a range statement, up to `to`): its row, a 410
 * when the cursor has expired. With `room`, sized: a large page is read only once its heap is
 * reserved (body-budget.ts).
 */
export async function readFeedRow(
  database: Queryable,
  sql: string,
  workspaceId: string,
  from: FeedStart,
  limit: number,
  room?: BodyRoom,
  to?: Omit<ChangePosition, 'pass'>,
): Promise<FeedRow> {
  const values = [workspaceId, from.txid, from.id, limit, from.pass];
  if (to !== undefined) values.push(to.txid, to.id);
  const row =
    room === undefined
      ? (await database.query<FeedRow>(sql, values))[0]
      : await room.budget.read(
          room.key,
          async (cap) =>
            (
              await database.query<FeedRow & { bytes: number }>(
                sizedFeedSql(sql, values.length + 1),
                [...values, cap],
              )
            )[0],
          (found) => found.data,
        );
  if (row === undefined) throw new Error('the feed statement returned no row');
  if (row.expired) throw new GoneException(CURSOR_EXPIRED);
  return row;
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

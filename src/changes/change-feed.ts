import { GoneException } from '@nestjs/common';
import { RecentlyUsed } from '../common/recently-used';
import { type JsonText, jsonText } from '../http/json-text';
import type { Queryable } from '../database/queryable';
import { type BodyRoom, sizedSql } from '../items/body-budget';
import type { ChangeCursors, FeedPosition } from './change-cursor';
import type { Feed } from './change-feed-sql';
import type { ChangesQueryDto } from './changes-query.dto';

/** The body of a feed page: `data` holds one feed's upserts and deletes. */
export interface ChangePage<T> {
  data: T[];
  nextCursor: string;
  hasMore: boolean;
}

/** A feed statement's row: the page's position and data, and whether the cursor expired. */
export interface FeedRow extends FeedPosition {
  expired: boolean;
  pass: string;
  has_more: boolean;
  /** A range's read (changeFeedSql's `range`): whether it holds the whole range. */
  complete?: boolean;
  /** Null once taken by `envelope`, or from a sized statement whose page was over its cap. */
  data: string | null;
}

export const CURSOR_EXPIRED = 'cursor has expired: start again without a cursor';

// Every selection of fields (items/field-selection.ts) has statements of its own, which a client
// may vary without end: the sized texts used last are kept (about 6 KB each); one forgotten is
// made again in microseconds.
const sized = new RecentlyUsed<string>(256);

/**
 * A feed statement run sized (body-budget.ts): its `data` only up to a cap, its parameter after
 * the statement's own (`$6` of a page, `$8` of a range, or null).
 */
export function sizedFeedSql(sql: string, capParameter = 6): string {
  return sized.get(sql, () => {
    const columns = ['expired', 'pass', 'txid', 'id', 'has_more'];
    if (capParameter === 8) columns.push('complete');
    return sizedSql(sql, 'data', columns, capParameter);
  });
}

/** A page of a feed (change-feed-sql.ts) after the query's cursor, with its signed cursor. */
export async function changeFeedPage<T>(
  database: Queryable,
  cursors: ChangeCursors,
  sql: string,
  feed: Feed,
  workspaceId: string,
  { cursor, limit }: ChangesQueryDto,
  room: BodyRoom,
): Promise<JsonText<ChangePage<T>>> {
  const after = startOf(cursors, feed, workspaceId, cursor);
  const row = await readFeedRow(database, { sql, workspaceId, after, limit, room });
  const nextCursor = cursors.encode(feed, workspaceId, row);
  return jsonText(envelope(row, nextCursor));
}

/** The position of `cursor` (a 400 when it is not this feed's and workspace's), or the start. */
export function startOf(
  cursors: ChangeCursors,
  feed: Feed,
  workspaceId: string,
  cursor: string | undefined,
): FeedPosition {
  // Without a cursor: before every position, and the pass starts with this read.
  return cursor === undefined
    ? { txid: '0', id: '', pass: null }
    : cursors.decode(feed, workspaceId, cursor);
}

/** One run of a feed's statement (change-feed-sql.ts) for a workspace. */
export interface FeedRead {
  /** A page statement, or a range statement when `to` is given. */
  sql: string;
  workspaceId: string;
  /** The changes after this position, in its pass. */
  after: FeedPosition;
  limit: number;
  /** A range's end, one that changeBoundariesSql gave. */
  to?: FeedPosition;
  /** Where a large page's heap is reserved before it is read (body-budget.ts). */
  room: BodyRoom;
}

/** Runs a feed's statement: its row, a 410 when the cursor has expired. */
export async function readFeedRow(
  database: Queryable,
  { sql, workspaceId, after, limit, to, room }: FeedRead,
): Promise<FeedRow> {
  const values = [workspaceId, after.txid, after.id, limit, after.pass];
  if (to !== undefined) values.push(to.txid, to.id);
  const row = await room.budget.read(
    room.key,
    async (cap) =>
      (
        await database.query<FeedRow & { bytes: number }>(sizedFeedSql(sql, values.length + 1), [
          ...values,
          cap,
        ])
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

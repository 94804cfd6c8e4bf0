import { GoneException } from '@nestjs/common';
import { type JsonText, jsonText } from '../http/json-text';
import type { Database } from '../database/database';
import type { Queryable } from '../database/queryable';
import { type BodyBudget, type BodyRoom, sizedSql } from '../items/body-budget';
import { keptStatements } from '../items/kept-statements';
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

/**
 * A feed statement run sized (body-budget.ts): its `data` only up to a cap, its parameter after
 * the statement's own (`$6` of a page, `$8` of a range, or null). Every selection of fields has
 * statements of its own: the sized texts are kept with the others (items/kept-statements.ts).
 */
export function sizedFeedSql(sql: string, capParameter = 6): string {
  // Keyed by the text itself, which keeps its hash: a key made from it would be hashed anew on
  // every read (6 KB: 10 µs, where the text's own hash takes 10 ns).
  return keptStatements(sql, () => {
    const columns = ['expired', 'pass', 'txid', 'id', 'has_more'];
    if (capParameter === 8) columns.push('complete');
    return sizedSql(sql, 'data', columns, capParameter);
  });
}

/**
 * The pages of one feed (change-feed-sql.ts), each after its query's cursor, with its signed
 * cursor: run in the workspace's turn (Database.forWorkspace), read through the body budget.
 */
export class ChangeFeedPages {
  constructor(
    private readonly feed: Feed,
    private readonly database: Pick<Database, 'forWorkspace'>,
    private readonly cursors: ChangeCursors,
    private readonly bodies: BodyBudget,
  ) {}

  /** The workspace's page after the query's cursor, read with `sql` (a selection's statement). */
  async page<T>(
    workspaceId: string,
    sql: string,
    { cursor, limit }: ChangesQueryDto,
  ): Promise<JsonText<ChangePage<T>>> {
    const { feed, cursors } = this;
    const after = startOf(cursors, feed, workspaceId, cursor);
    const room = { budget: this.bodies, key: `${feed}/changes:${workspaceId}` };
    const database = this.database.forWorkspace(workspaceId);
    const row = await readFeedRow(database, { sql, workspaceId, after, limit, room });
    const nextCursor = cursors.encode(feed, workspaceId, row);
    return jsonText(envelope(row, nextCursor));
  }
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

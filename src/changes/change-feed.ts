import { GoneException } from '@nestjs/common';
import { type JsonText, jsonText } from '../http/json-text';
import type { Queryable } from '../database/queryable';
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
  data: string;
}

export const CURSOR_EXPIRED = 'cursor has expired: start again without a cursor';

/** Runs a feed's statement (change-feed-sql.ts) and adds the signed cursor to its JSON. */
export async function changeFeedPage<T>(
  database: Queryable,
  cursors: ChangeCursors,
  sql: string,
  feed: Feed,
  workspaceId: string,
  { cursor, limit }: ChangesQueryDto,
): Promise<JsonText<ChangePage<T>>> {
  // Without a cursor: before every position, and the pass starts with this read.
  const from =
    cursor === undefined
      ? { txid: '0', id: '', pass: null }
      : cursors.decode(feed, workspaceId, cursor);
  const [row] = await database.query<FeedRow>(sql, [
    workspaceId,
    from.txid,
    from.id,
    limit,
    from.pass,
  ]);
  if (row.expired) throw new GoneException(CURSOR_EXPIRED);
  const nextCursor = cursors.encode(feed, workspaceId, row);
  return jsonText(
    `{"data":${row.data},"nextCursor":${JSON.stringify(nextCursor)},"hasMore":${row.has_more}}`,
  );
}

/** Runs a single-item statement (item-sql.ts): the item's JSON, or null when not in the workspace. */
export async function itemById<T>(
  database: Queryable,
  sql: string,
  workspaceId: string,
  id: string,
): Promise<JsonText<T> | null> {
  const [row] = await database.query<{ body: string }>(sql, [workspaceId, id]);
  return row ? jsonText<T>(row.body) : null;
}

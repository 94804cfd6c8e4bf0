import { Injectable } from '@nestjs/common';
import { invalidCursor, SignedCursors } from '../items/signed-cursors';
import type { Feed } from './change-feed-sql';

/**
 * A place in a change feed: the last change passed (its writing transaction's id as a decimal
 * xid8, and the item id), and `pass`, the xmin of the first read of the client's pass, which
 * decides whether pruned deletions concern it. `pass` is null before that first read (a read
 * without a cursor starts a pass); every row of the feed's statements, and so every cursor, has it.
 */
export interface FeedPosition {
  txid: string;
  id: string;
  pass: string | null;
}

const PAYLOAD = /^(\d{1,20}):(\d{1,20}):([\s\S]*)$/;

/**
 * The change feeds' cursors: a feed position, signed for its feed and workspace (SignedCursors).
 * A cursor carried to the other feed or to another workspace is answered 400.
 */
@Injectable()
export class ChangeCursors {
  constructor(private readonly signed: SignedCursors) {}

  encode(feed: Feed, workspaceId: string, { txid, id, pass }: FeedPosition): string {
    if (pass === null) throw new Error('a cursor is issued for a position read from the feed');
    return this.signed.sign(feed, workspaceId, `${txid}:${pass}:${id}`);
  }

  /** The position of a cursor this service issued for this feed and workspace, or a 400. */
  decode(feed: Feed, workspaceId: string, cursor: string): FeedPosition {
    const match = PAYLOAD.exec(this.signed.open(feed, workspaceId, cursor));
    if (!match) throw invalidCursor();
    return { txid: match[1], pass: match[2], id: match[3] };
  }
}

import { BadRequestException, Injectable } from '@nestjs/common';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { Environment } from '../config/environment';
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

// Far above any real cursor (an id is at most a few hundred characters); refused unread beyond it.
const MAX_CURSOR_LENGTH = 2_048;
const MAC_BYTES = 16;
const BASE64URL = /^[A-Za-z0-9_-]+$/;
const PAYLOAD = /^(\d{1,20}):(\d{1,20}):([\s\S]*)$/;

export const INVALID_CURSOR = 'cursor is not valid';

/**
 * Cursors are opaque to clients and signed: base64url of the position, a dot, and an HMAC-SHA-256
 * (truncated to 128 bits) of the position together with the feed and the workspace. A cursor
 * edited by hand, or carried to the other feed or to another workspace, fails the check and is
 * answered 400 without touching the database. The key is derived from API_KEY_SECRET: changing
 * that secret invalidates every cursor, as it does every key.
 */
@Injectable()
export class ChangeCursors {
  private readonly key: Buffer;

  constructor(environment: Environment) {
    this.key = createHmac('sha256', environment.API_KEY_SECRET).update('change-cursors').digest();
  }

  encode(feed: Feed, workspaceId: string, { txid, id, pass }: FeedPosition): string {
    if (pass === null) throw new Error('a cursor is issued for a position read from the feed');
    const payload = Buffer.from(`${txid}:${pass}:${id}`, 'utf8');
    return `${payload.toString('base64url')}.${this.mac(feed, workspaceId, payload).toString('base64url')}`;
  }

  /** The position of a cursor this service issued for this feed and workspace, or a 400. */
  decode(feed: Feed, workspaceId: string, cursor: string): FeedPosition {
    const parts = cursor.length <= MAX_CURSOR_LENGTH ? cursor.split('.') : [];
    if (parts.length !== 2 || !parts.every((part) => BASE64URL.test(part))) throw invalid();
    const [payload, mac] = parts.map((part) => Buffer.from(part, 'base64url'));
    // One text per cursor: base64 leaves spare bits in its last character, which decoding ignores.
    if (payload.toString('base64url') !== parts[0] || mac.toString('base64url') !== parts[1]) {
      throw invalid();
    }
    const expected = this.mac(feed, workspaceId, payload);
    if (mac.length !== expected.length || !timingSafeEqual(mac, expected)) throw invalid();
    const match = PAYLOAD.exec(payload.toString('utf8'));
    if (!match) throw invalid();
    return { txid: match[1], pass: match[2], id: match[3] };
  }

  private mac(feed: Feed, workspaceId: string, payload: Buffer): Buffer {
    return createHmac('sha256', this.key)
      .update(`${feed}\0${workspaceId}\0`)
      .update(payload)
      .digest()
      .subarray(0, MAC_BYTES);
  }
}

function invalid(): BadRequestException {
  return new BadRequestException([INVALID_CURSOR]);
}

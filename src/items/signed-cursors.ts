import { BadRequestException, Injectable } from '@nestjs/common';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { Environment } from '../config/environment';

// Far above any real cursor (an id is at most a few hundred characters); refused unread beyond it.
const MAX_CURSOR_LENGTH = 2_048;
const MAC_BYTES = 16;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

/**
 * A cursor's schema in the OpenAPI document, as issued and taken back: `open` refuses any text
 * longer or of another shape (the position and its MAC, both base64url).
 */
export const CURSOR_SCHEMA = {
  type: String,
  maxLength: MAX_CURSOR_LENGTH,
  pattern: '^[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$',
};

export const INVALID_CURSOR = 'cursor is not valid';

/**
 * Cursors are opaque to clients and signed: base64url of a position, a dot, and an HMAC-SHA-256
 * (truncated to 128 bits) of the position together with its scope (a feed, a list) and the
 * workspace. A cursor edited by hand, or carried to another scope or workspace, fails the check
 * and is answered 400 without touching the database. The key is derived from API_KEY_SECRET:
 * changing that secret invalidates every cursor, as it does every key.
 */
@Injectable()
export class SignedCursors {
  private readonly key: Buffer;

  constructor(environment: Environment) {
    // The label the change feeds' cursors were first signed under: they stay valid.
    this.key = createHmac('sha256', environment.API_KEY_SECRET).update('change-cursors').digest();
  }

  sign(scope: string, workspaceId: string, position: string): string {
    const payload = Buffer.from(position, 'utf8');
    return `${payload.toString('base64url')}.${this.mac(scope, workspaceId, payload).toString('base64url')}`;
  }

  /** The position of a cursor this service signed for this scope and workspace, or a 400. */
  open(scope: string, workspaceId: string, cursor: string): string {
    const parts = cursor.length <= MAX_CURSOR_LENGTH ? cursor.split('.') : [];
    if (parts.length !== 2 || !parts.every((part) => BASE64URL.test(part))) throw invalidCursor();
    const [payload, mac] = parts.map((part) => Buffer.from(part, 'base64url'));
    // One text per cursor: base64 leaves spare bits in its last character, which decoding ignores.
    if (payload.toString('base64url') !== parts[0] || mac.toString('base64url') !== parts[1]) {
      throw invalidCursor();
    }
    const expected = this.mac(scope, workspaceId, payload);
    if (mac.length !== expected.length || !timingSafeEqual(mac, expected)) throw invalidCursor();
    return payload.toString('utf8');
  }

  private mac(scope: string, workspaceId: string, payload: Buffer): Buffer {
    return createHmac('sha256', this.key)
      .update(`${scope}\0${workspaceId}\0`)
      .update(payload)
      .digest()
      .subarray(0, MAC_BYTES);
  }
}

/** The 400 of a cursor that is not one this service signed for the request's scope. */
export function invalidCursor(): BadRequestException {
  return new BadRequestException([INVALID_CURSOR]);
}

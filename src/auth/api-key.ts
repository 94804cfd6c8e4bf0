import { createHmac, randomInt } from 'node:crypto';
import { crc32 } from 'node:zlib';
import type { Plan } from '../generated/prisma/enums';

/*
 * An API key is `st_` + 32 base62 characters from the CSPRNG (~190 bits) + a 6-character base62
 * CRC32 of everything before it. The checksum lets secret scanners recognise a leaked key and lets
 * the service refuse a mistyped or forged key without a database query.
 */
export const KEY_PREFIX = 'st_';
export const RANDOM_LENGTH = 32;
export const CHECKSUM_LENGTH = 6;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
// Longer random parts are allowed by the contract ("at least 32"); the cap keeps a huge header
// from costing anything.
const KEY_PATTERN = new RegExp(
  `^${KEY_PREFIX}[0-9A-Za-z]{${RANDOM_LENGTH + CHECKSUM_LENGTH},200}$`,
);
/** Characters of a key that are safe to show: the prefix and a few random characters. */
const DISPLAY_PREFIX_LENGTH = KEY_PREFIX.length + 6;

export function generateApiKey(): string {
  let body = KEY_PREFIX;
  for (let i = 0; i < RANDOM_LENGTH; i++) body += BASE62[randomInt(BASE62.length)];
  return body + checksum(body);
}

/** Shape and checksum only: true does not mean that the key exists. */
export function isWellFormedApiKey(candidate: string): boolean {
  if (!KEY_PATTERN.test(candidate)) return false;
  const body = candidate.slice(0, -CHECKSUM_LENGTH);
  return checksum(body) === candidate.slice(-CHECKSUM_LENGTH);
}

/** The one-way value stored and looked up: HMAC-SHA-256 under the server's secret, hex. */
export function hashApiKey(key: string, secret: string): string {
  return createHmac('sha256', secret).update(key).digest('hex');
}

export function displayPrefix(key: string): string {
  return key.slice(0, DISPLAY_PREFIX_LENGTH);
}

function checksum(body: string): string {
  let value = crc32(body);
  let encoded = '';
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    encoded = BASE62[value % 62] + encoded;
    value = Math.floor(value / 62);
  }
  return encoded;
}

/** Expired from its instant on: a key whose expiresAt is now is refused (null: it never expires). */
export function isExpired(expiresAt: Date | null, now: number): boolean {
  return expiresAt !== null && expiresAt.getTime() <= now;
}

/** What a request carries once its key is accepted. */
export interface AuthenticatedKey {
  keyId: string;
  /** When the key stops working (it expires, or its roll's overlap ends); null: never. */
  expiresAt: Date | null;
  /** What it may read (src/auth/scopes.ts); empty: everything. */
  scopes: readonly string[];
  workspace: { id: string; name: string; plan: Plan };
}

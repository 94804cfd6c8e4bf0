import { crc32 } from 'node:zlib';

/*
 * The key format of docs/api.md written again from the contract, not imported from src: `st_`,
 * base62 randomness, then a 6-character base62 CRC32 of everything before it. Anyone can compute
 * it (secret scanners do), so tests use it to forge well-formed keys that do not exist.
 */
export const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const CHECKSUM_LENGTH = 6;

/** `body` followed by its checksum: a well-formed key (which may well not exist). */
export function withChecksum(body: string): string {
  let value = crc32(body);
  let checksum = '';
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    checksum = BASE62[value % 62] + checksum;
    value = Math.floor(value / 62);
  }
  return body + checksum;
}

/** Another base62 character than `c`. */
export function otherBase62(c: string, shift = 1): string {
  const index = BASE62.indexOf(c);
  return BASE62[(Math.max(index, 0) + shift) % BASE62.length];
}

/**
 * The key with its random part changed from position `from` (of the whole key) to the end, and a
 * valid checksum: well-formed, sharing the first `from` characters with the real key.
 */
export function lookAlikeKey(key: string, from: number): string {
  const body = key.slice(0, -CHECKSUM_LENGTH);
  let changed = body.slice(0, from);
  for (let i = from; i < body.length; i++) changed += otherBase62(body[i], 1 + (i % 61));
  return withChecksum(changed);
}

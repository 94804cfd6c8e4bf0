import { Injectable } from '@nestjs/common';
import { type AuthenticatedKey, isExpired } from './api-key';

/** How long a key checked against the database is remembered for refusals. */
export const RECENT_KEY_TTL_MS = 60_000;
// Bounded: a process remembers at most this many keys (the oldest go first).
const MAX_KEYS = 10_000;

/**
 * Keys that the database accepted lately, by hash. Used for one thing only: counting a request
 * against its workspace's in-flight limit from its arrival, and refusing it without a database
 * query when the workspace already has its limit in progress (in-flight-on-arrival.ts). Never to
 * admit a request: a key revoked a moment ago must be refused on the very next request, and every
 * admitted request is checked against the database. At worst a key revoked within the last minute
 * gets a 429 instead of a 401 while its workspace is at its limit: no data, and nothing a holder
 * of the key did not know.
 */
@Injectable()
export class RecentKeys {
  private readonly keys = new Map<string, { auth: AuthenticatedKey; at: number }>();

  remember(hash: string, auth: AuthenticatedKey, now: number): void {
    this.keys.delete(hash);
    this.keys.set(hash, { auth, at: now });
    if (this.keys.size > MAX_KEYS) this.keys.delete(this.keys.keys().next().value as string);
  }

  forget(hash: string): void {
    this.keys.delete(hash);
  }

  /** The key's last accepted check, if within RECENT_KEY_TTL_MS and the key has not expired since. */
  find(hash: string, now: number): AuthenticatedKey | undefined {
    const found = this.keys.get(hash);
    if (found === undefined || now - found.at > RECENT_KEY_TTL_MS) return undefined;
    if (isExpired(found.auth.expiresAt, now)) return undefined;
    return found.auth;
  }
}

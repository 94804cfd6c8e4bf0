import { Injectable } from '@nestjs/common';
import type { IncomingMessage } from 'node:http';
import { Clock } from '../common/clock';
import { Environment } from '../config/environment';
import { Database } from '../database/database';
import { planIncludesApiAccess } from './plans';
import { type AuthenticatedKey, hashApiKey, isExpired } from './api-key';
import { recordApiKeyUse } from './api-keys.sql';
import { KeyLookups } from './key-lookups';
import { type PresentedKey, presentedKey } from './presented-key';
import { RecentKeys } from './recent-keys';

// lastUsedAt is informative: one write per key per minute is enough, and keeps reads read-only.
const LAST_USED_RESOLUTION_MS = 60_000;

/** Checking a request's key: the serving side of keys (the admin tool issues them). */
@Injectable()
export class ApiKeysService {
  private readonly secret: string;
  /** When this process last wrote each key's lastUsedAt (by key id; pruned as they age). */
  private readonly recordedUse = new Map<string, number>();

  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly recent: RecentKeys,
    private readonly lookups: KeyLookups,
    environment: Environment,
  ) {
    this.secret = environment.API_KEY_SECRET;
  }

  /**
   * The key's workspace if the key exists, is neither revoked nor expired, and its workspace may
   * use the API.
   */
  async authenticate({ hash }: PresentedKey): Promise<AuthenticatedKey | null> {
    const found = await this.lookups.find(hash);
    if (
      !found ||
      found.revokedAt ||
      isExpired(found.expiresAt, this.clock.now()) ||
      found.suspended ||
      !planIncludesApiAccess(found.plan)
    ) {
      this.recent.forget(hash);
      return null;
    }
    await this.recordUse(found.id, found.lastUsedAt);
    const auth = {
      keyId: found.id,
      expiresAt: found.expiresAt,
      scopes: found.scopes,
      workspace: { id: found.workspaceId, name: found.workspaceName, plan: found.plan },
    };
    this.recent.remember(hash, auth, this.clock.now());
    return auth;
  }

  /** The request's well-formed bearer key and its hash, read once per request. */
  presentedKey(request: IncomingMessage): PresentedKey | undefined {
    return presentedKey(request, (key) => this.hash(key));
  }

  /** What a key is stored as (HMAC-SHA-256 under API_KEY_SECRET). */
  hash(key: string): string {
    return hashApiKey(key, this.secret);
  }

  private async recordUse(id: string, lastUsedAt: Date | null): Promise<void> {
    const now = this.clock.now();
    if (lastUsedAt && now - lastUsedAt.getTime() < LAST_USED_RESOLUTION_MS) return;
    // Concurrent requests of a key read the same old lastUsedAt: one of them writes it, rather
    // than each waiting in turn for the row's lock to find it written.
    const recorded = this.recordedUse.get(id);
    if (recorded !== undefined && now - recorded < LAST_USED_RESOLUTION_MS) return;
    this.forgetRecordedBefore(now - LAST_USED_RESOLUTION_MS);
    this.recordedUse.delete(id);
    this.recordedUse.set(id, now);
    // On the pool like the lookup: serving requests never loads Prisma's query engine.
    const staleBefore = new Date(now - LAST_USED_RESOLUTION_MS);
    await recordApiKeyUse(this.database, id, new Date(now), staleBefore);
  }

  private forgetRecordedBefore(horizon: number): void {
    // Oldest first (a key written again moves to the end): stop at the first recent one.
    for (const [id, at] of this.recordedUse) {
      if (at >= horizon) return;
      this.recordedUse.delete(id);
    }
  }
}

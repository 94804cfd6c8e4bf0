import { Injectable } from '@nestjs/common';
import { Clock } from '../common/clock';
import { Environment } from '../config/environment';
import { Database } from '../database/database';
import { planIncludesApiAccess } from './plans';
import { type AuthenticatedKey, hashApiKey, isExpired } from './api-key';
import { type ApiKeyRow, findApiKeyByHash, recordApiKeyUse } from './api-keys.sql';
import { RecentKeys } from './recent-keys';

// lastUsedAt is informative: one write per key per minute is enough, and keeps reads read-only.
const LAST_USED_RESOLUTION_MS = 60_000;

/** Checking a request's key: the serving side of keys (the admin tool issues them). */
@Injectable()
export class ApiKeysService {
  private readonly secret: string;

  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly recent: RecentKeys,
    environment: Environment,
  ) {
    this.secret = environment.API_KEY_SECRET;
  }

  /**
   * The key's workspace if the key exists, is neither revoked nor expired, and its workspace may
   * use the API.
   */
  async authenticate(key: string): Promise<AuthenticatedKey | null> {
    const hash = this.hash(key);
    const found = await this.findByHash(hash);
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

  /** What a key is stored as (HMAC-SHA-256 under API_KEY_SECRET). */
  hash(key: string): string {
    return hashApiKey(key, this.secret);
  }

  /** The one database lookup of a request's key. */
  async findByHash(hash: string): Promise<ApiKeyRow | undefined> {
    return findApiKeyByHash(this.database, hash);
  }

  private async recordUse(id: string, lastUsedAt: Date | null): Promise<void> {
    const now = this.clock.now();
    if (lastUsedAt && now - lastUsedAt.getTime() < LAST_USED_RESOLUTION_MS) return;
    // On the pool like the lookup: serving requests never loads Prisma's query engine.
    const staleBefore = new Date(now - LAST_USED_RESOLUTION_MS);
    await recordApiKeyUse(this.database, id, new Date(now), staleBefore);
  }
}

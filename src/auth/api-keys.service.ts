import { Injectable } from '@nestjs/common';
import type { IncomingMessage } from 'node:http';
import { Clock } from '../common/clock';
import { Environment } from '../config/environment';
import { planIncludesApiAccess } from './plans';
import { type AuthenticatedKey, hashApiKey, isExpired } from './api-key';
import { KeyLookups } from './key-lookups';
import { KeyUses } from './key-uses';
import { type PresentedKey, presentedKey } from './presented-key';
import { RecentKeys } from './recent-keys';

/** Checking a request's key: the serving side of keys (the admin tool issues them). */
@Injectable()
export class ApiKeysService {
  private readonly secret: string;

  constructor(
    private readonly clock: Clock,
    private readonly recent: RecentKeys,
    private readonly lookups: KeyLookups,
    private readonly uses: KeyUses,
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
    this.uses.record(found.id, found.lastUsedAt);
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
}

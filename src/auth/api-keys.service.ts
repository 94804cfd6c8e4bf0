import { BadRequestException, Injectable, NotFoundException } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { Clock } from '../common/clock';
import { Environment } from '../config/environment';
import type { Plan } from '../generated/prisma/client';
import { PrismaService } from '../prisma/prisma.service';
import { planIncludesApiAccess } from '../workspaces/plans';
import { displayPrefix, generateApiKey, hashApiKey } from './api-key';
import { API_KEY_BY_HASH_SQL, API_KEY_RECORD_USE_SQL, type ApiKeyRow } from './api-keys.sql';

/** What a request carries once its key is accepted. */
export interface AuthenticatedKey {
  keyId: string;
  workspace: { id: string; name: string; plan: Plan };
}

export interface ApiKeySummary {
  id: string;
  name: string;
  prefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

// lastUsedAt is informative: one write per key per minute is enough, and keeps reads read-only.
const LAST_USED_RESOLUTION_MS = 60_000;

@Injectable()
export class ApiKeysService {
  private readonly secret: string;

  constructor(
    private readonly prisma: PrismaService,
    private readonly clock: Clock,
    environment: Environment,
  ) {
    this.secret = environment.API_KEY_SECRET;
  }

  /** The key's workspace if the key exists, is not revoked and its workspace may use the API. */
  async authenticate(key: string): Promise<AuthenticatedKey | null> {
    const found = await this.findByHash(hashApiKey(key, this.secret));
    if (!found || found.revokedAt || found.suspended || !planIncludesApiAccess(found.plan)) {
      return null;
    }
    await this.recordUse(found.id, found.lastUsedAt);
    return {
      keyId: found.id,
      workspace: { id: found.workspaceId, name: found.workspaceName, plan: found.plan },
    };
  }

  /** The one database lookup of a request's key. */
  async findByHash(hash: string): Promise<ApiKeyRow | undefined> {
    const [found] = await this.prisma.query<ApiKeyRow>(API_KEY_BY_HASH_SQL, [hash]);
    return found;
  }

  /** Creates a key and returns its full value, which is never stored and cannot be shown again. */
  async create(
    workspaceId: string,
    name: string,
  ): Promise<ApiKeySummary & { workspaceId: string; key: string }> {
    if (name.trim() === '') throw new BadRequestException('--name must not be empty');
    const workspace = await this.prisma.workspace.findUnique({ where: { id: workspaceId } });
    if (!workspace) throw new NotFoundException(`workspace ${workspaceId} does not exist`);
    if (!planIncludesApiAccess(workspace.plan)) {
      throw new BadRequestException(
        `workspace ${workspaceId} is on the ${workspace.plan} plan, which has no API access`,
      );
    }
    const key = generateApiKey();
    const created = await this.prisma.apiKey.create({
      data: {
        id: randomUUID(),
        workspaceId,
        name,
        prefix: displayPrefix(key),
        hash: hashApiKey(key, this.secret),
      },
      select: summarySelect,
    });
    return { ...created, workspaceId, key };
  }

  async list(workspaceId: string): Promise<ApiKeySummary[]> {
    const workspace = await this.prisma.workspace.findUnique({ where: { id: workspaceId } });
    if (!workspace) throw new NotFoundException(`workspace ${workspaceId} does not exist`);
    return this.prisma.apiKey.findMany({
      where: { workspaceId },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      select: summarySelect,
    });
  }

  /** Revokes a key; the next request made with it is refused. Revoking twice keeps the first date. */
  async revoke(id: string): Promise<{ id: string; revokedAt: Date }> {
    const key = await this.prisma.apiKey.findUnique({ where: { id } });
    if (!key) throw new NotFoundException(`key ${id} does not exist`);
    if (key.revokedAt) return { id, revokedAt: key.revokedAt };
    const revokedAt = new Date(this.clock.now());
    await this.prisma.apiKey.update({ where: { id }, data: { revokedAt } });
    return { id, revokedAt };
  }

  private async recordUse(id: string, lastUsedAt: Date | null): Promise<void> {
    const now = this.clock.now();
    if (lastUsedAt && now - lastUsedAt.getTime() < LAST_USED_RESOLUTION_MS) return;
    // On the pool like the lookup: serving requests never loads Prisma's query engine.
    const staleBefore = new Date(now - LAST_USED_RESOLUTION_MS);
    await this.prisma.query(API_KEY_RECORD_USE_SQL, [id, new Date(now), staleBefore]);
  }
}

const summarySelect = {
  id: true,
  name: true,
  prefix: true,
  createdAt: true,
  lastUsedAt: true,
  revokedAt: true,
} as const;

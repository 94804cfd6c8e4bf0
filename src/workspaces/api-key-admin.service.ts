import { BadRequestException, Injectable, NotFoundException } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { displayPrefix, generateApiKey, hashApiKey } from '../auth/api-key';
import { Clock } from '../common/clock';
import { Environment } from '../config/environment';
import { PrismaService } from '../prisma/prisma.service';
import { planIncludesApiAccess } from './plans';

export interface ApiKeySummary {
  id: string;
  name: string;
  prefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

/** Issuing, listing and revoking keys: the admin tool's side (the server checks them in src/auth). */
@Injectable()
export class ApiKeyAdminService {
  private readonly secret: string;

  constructor(
    private readonly prisma: PrismaService,
    private readonly clock: Clock,
    environment: Environment,
  ) {
    this.secret = environment.API_KEY_SECRET;
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
}

const summarySelect = {
  id: true,
  name: true,
  prefix: true,
  createdAt: true,
  lastUsedAt: true,
  revokedAt: true,
} as const;

import {
  BadRequestException,
  ConflictException,
  Injectable,
  NotFoundException,
} from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { displayPrefix, generateApiKey, hashApiKey, isExpired } from '../auth/api-key';
import type { Scope } from '../auth/scopes';
import { Clock } from '../common/clock';
import { Environment } from '../config/environment';
import { PrismaService } from '../prisma/prisma.service';
import { planIncludesApiAccess } from '../auth/plans';

export interface ApiKeySummary {
  id: string;
  name: string;
  prefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  expiresAt: Date | null;
  rolledAt: Date | null;
  /** Empty: every scope (src/auth/scopes.ts). */
  scopes: string[];
}

/** The longest a rolled key keeps working beside its successor. */
export const MAX_ROLL_OVERLAP_MS = 7 * 24 * 60 * 60 * 1000;

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

  /**
   * Creates a key and returns its full value, which is never stored and cannot be shown again.
   * With `expiresAt`, the key is refused from that instant on (which must be in the future).
   */
  async create(
    workspaceId: string,
    name: string,
    expiresAt: Date | null = null,
    scopes: readonly Scope[] = [],
  ): Promise<ApiKeySummary & { workspaceId: string; key: string }> {
    if (name.trim() === '') throw new BadRequestException('--name must not be empty');
    if (expiresAt && isExpired(expiresAt, this.clock.now())) {
      throw new BadRequestException(
        `the key would expire at ${expiresAt.toISOString()}, which is not in the future`,
      );
    }
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
        // The admin tool's clock, as expiresAt's: a key's lifetime is exact (a roll repeats it).
        createdAt: new Date(this.clock.now()),
        expiresAt,
        scopes: [...scopes],
      },
      select: summarySelect,
    });
    return { ...created, workspaceId, key };
  }

  /**
   * Rolls a key: a successor (same workspace, name and scopes, and the same lifetime if it expires;
   * its value shown this once) and the old key working until the overlap ends, or until it would
   * have expired if that is sooner. A key is rolled once, and never when revoked or expired: its
   * successor is the one to roll next. Conditional on the key's row, so that two rolls at once
   * make one successor.
   */
  async roll(
    id: string,
    overlapMs: number,
  ): Promise<{ rolled: ApiKeySummary; successor: ApiKeySummary & { key: string } }> {
    const now = this.clock.now();
    const old = await this.prisma.apiKey.findUnique({ where: { id } });
    if (!old) throw new NotFoundException(`key ${id} does not exist`);
    if (old.revokedAt) throw new BadRequestException(`key ${id} is revoked: it cannot be rolled`);
    if (old.rolledAt) {
      throw new BadRequestException(
        `key ${id} was rolled at ${old.rolledAt.toISOString()}: roll its successor instead`,
      );
    }
    if (old.expiresAt && isExpired(old.expiresAt, now)) {
      throw new BadRequestException(`key ${id} expired at ${old.expiresAt.toISOString()}`);
    }
    const overlapEnd = now + overlapMs;
    const oldExpiresAt = new Date(Math.min(overlapEnd, old.expiresAt?.getTime() ?? overlapEnd));
    const lifetime = old.expiresAt ? old.expiresAt.getTime() - old.createdAt.getTime() : null;
    const key = generateApiKey();
    return this.prisma.$transaction(async (tx) => {
      const marked = await tx.apiKey.updateMany({
        where: { id, rolledAt: null, revokedAt: null },
        data: { rolledAt: new Date(now), expiresAt: oldExpiresAt },
      });
      if (marked.count !== 1)
        throw new ConflictException(`key ${id} was rolled or revoked meanwhile`);
      const successor = await tx.apiKey.create({
        data: {
          id: randomUUID(),
          workspaceId: old.workspaceId,
          name: old.name,
          prefix: displayPrefix(key),
          hash: hashApiKey(key, this.secret),
          createdAt: new Date(now),
          expiresAt: lifetime === null ? null : new Date(now + lifetime),
          scopes: old.scopes,
        },
        select: summarySelect,
      });
      const rolled = await tx.apiKey.findUniqueOrThrow({ where: { id }, select: summarySelect });
      return { rolled, successor: { ...successor, key } };
    });
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
  expiresAt: true,
  rolledAt: true,
  scopes: true,
} as const;

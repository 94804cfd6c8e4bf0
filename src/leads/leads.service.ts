import { Injectable } from '@nestjs/common';
import type { ListQueryDto } from '../common/list-query.dto';
import type { Page } from '../common/page';
import type { Prisma } from '../generated/prisma/client';
import { PrismaService } from '../prisma/prisma.service';
import { type LeadDto, leadSelect, toLeadDto } from './dto/lead.dto';

@Injectable()
export class LeadsService {
  constructor(private readonly prisma: PrismaService) {}

  /** A page of the workspace's leads, hottest first, ties by id so that paging is stable. */
  async list(workspaceId: string, query: ListQueryDto): Promise<Page<LeadDto>> {
    const where: Prisma.LeadWhereInput = {
      workspaceId,
      ...(query.since && { createdAt: { gte: query.since } }),
    };
    // One snapshot for both, so that `total` and the page agree while rows change.
    const [total, rows] = await this.prisma.$transaction(
      [
        this.prisma.lead.count({ where }),
        this.prisma.lead.findMany({
          where,
          orderBy: [{ intentScore: 'desc' }, { id: 'asc' }],
          skip: query.offset,
          take: query.limit,
          select: leadSelect,
        }),
      ],
      { isolationLevel: 'RepeatableRead' },
    );
    return { total, limit: query.limit, offset: query.offset, data: rows.map(toLeadDto) };
  }
}

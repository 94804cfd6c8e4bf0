import { Injectable } from '@nestjs/common';
import type { ListQueryDto } from '../common/list-query.dto';
import type { Page } from '../common/page';
import type { Prisma } from '../generated/prisma/client';
import { PrismaService } from '../prisma/prisma.service';
import { type CompanyDto, companySelect, toCompanyDto } from './dto/company.dto';

@Injectable()
export class CompaniesService {
  constructor(private readonly prisma: PrismaService) {}

  /** A page of the workspace's companies, hottest first, ties by id so that paging is stable. */
  async list(workspaceId: string, query: ListQueryDto): Promise<Page<CompanyDto>> {
    const where: Prisma.CompanyWhereInput = {
      workspaceId,
      ...(query.since && { lastSeen: { gte: query.since } }),
    };
    // One snapshot for both, so that `total` and the page agree while rows change.
    const [total, rows] = await this.prisma.$transaction(
      [
        this.prisma.company.count({ where }),
        this.prisma.company.findMany({
          where,
          orderBy: [{ intentScore: 'desc' }, { id: 'asc' }],
          skip: query.offset,
          take: query.limit,
          select: companySelect,
        }),
      ],
      { isolationLevel: 'RepeatableRead' },
    );
    return { total, limit: query.limit, offset: query.offset, data: rows.map(toCompanyDto) };
  }
}

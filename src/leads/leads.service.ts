import { Injectable } from '@nestjs/common';
import type { JsonText } from '../common/json-text';
import type { ListQueryDto } from '../common/list-query.dto';
import { listPage } from '../common/list-page';
import type { Page } from '../common/page';
import { PrismaService } from '../prisma/prisma.service';
import type { LeadDto } from './dto/lead.dto';
import { LEAD_PAGE_SQL } from './leads.sql';

@Injectable()
export class LeadsService {
  constructor(private readonly prisma: PrismaService) {}

  /** A page of the workspace's leads, hottest first, ties by id so that paging is stable. */
  list(workspaceId: string, query: ListQueryDto): Promise<JsonText<Page<LeadDto>>> {
    return listPage(this.prisma, LEAD_PAGE_SQL, workspaceId, query);
  }
}

import { Injectable } from '@nestjs/common';
import type { JsonText } from '../common/json-text';
import type { ListQueryDto } from '../common/list-query.dto';
import { listPage } from '../common/list-page';
import type { Page } from '../common/page';
import { PrismaService } from '../prisma/prisma.service';
import { COMPANY_PAGE_SQL } from './companies.sql';
import type { CompanyDto } from './dto/company.dto';

@Injectable()
export class CompaniesService {
  constructor(private readonly prisma: PrismaService) {}

  /** A page of the workspace's companies, hottest first, ties by id so that paging is stable. */
  list(workspaceId: string, query: ListQueryDto): Promise<JsonText<Page<CompanyDto>>> {
    return listPage(this.prisma, COMPANY_PAGE_SQL, workspaceId, query);
  }
}

import { Controller, Get, Query } from '@nestjs/common';
import { Workspace, type AuthenticatedWorkspace } from '../auth/workspace.decorator';
import { ListQueryDto } from '../common/list-query.dto';
import type { Page } from '../common/page';
import { CompaniesService } from './companies.service';
import type { CompanyDto } from './dto/company.dto';

@Controller('v1/companies')
export class CompaniesController {
  constructor(private readonly companies: CompaniesService) {}

  @Get()
  listCompanies(
    @Workspace() workspace: AuthenticatedWorkspace,
    @Query() query: ListQueryDto,
  ): Promise<Page<CompanyDto>> {
    return this.companies.list(workspace.id, query);
  }
}

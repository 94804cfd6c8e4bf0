import { Controller, Get, Header, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Workspace, type AuthenticatedWorkspace } from '../auth/workspace.decorator';
import type { JsonText } from '../common/json-text';
import { ListQueryDto } from '../common/list-query.dto';
import { ApiContractResponses } from '../openapi/api-responses.decorator';
import { CompaniesService } from './companies.service';
import { CompanyPageDto } from './dto/company-page.dto';

@ApiTags('companies')
@ApiBearerAuth()
@Controller('v1/companies')
export class CompaniesController {
  constructor(private readonly companies: CompaniesService) {}

  @Get()
  // The body comes serialized from the database (see list-page-sql.ts).
  @Header('Content-Type', 'application/json; charset=utf-8')
  @ApiOperation({
    operationId: 'listCompanies',
    summary: 'List the identified companies, hottest first',
    description:
      "The companies identified on the workspace's website, with their contacts, sorted by " +
      '`intentScore` descending (ties by `id`). `since` keeps the companies whose `lastSeen` is ' +
      'at or after it.',
  })
  @ApiContractResponses(CompanyPageDto, 'A page of companies.')
  listCompanies(
    @Workspace() workspace: AuthenticatedWorkspace,
    @Query() query: ListQueryDto,
  ): Promise<JsonText<CompanyPageDto>> {
    return this.companies.list(workspace.id, query);
  }
}

import { Controller, Get, Header, Param, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Workspace, type AuthenticatedWorkspace } from '../auth/workspace.decorator';
import { ChangesQueryDto } from '../changes/changes-query.dto';
import type { JsonText } from '../http/json-text';
import { ListQueryDto } from '../http/list-query.dto';
import { NoQueryDto } from '../http/no-query.dto';
import { ApiContractResponses } from '../http/api-responses.decorator';
import { CompaniesService } from './companies.service';
import { CompanyChangePageDto } from './dto/company-change-page.dto';
import { CompanyPageDto } from './dto/company-page.dto';
import { CompanyDto } from './dto/company.dto';

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
  @ApiContractResponses(CompanyPageDto, 'A page of companies.', { scopes: ['companies:read'] })
  listCompanies(
    @Workspace() workspace: AuthenticatedWorkspace,
    @Query() query: ListQueryDto,
  ): Promise<JsonText<CompanyPageDto>> {
    return this.companies.list(workspace.id, query);
  }

  // Declared before `:id`, which would otherwise take `changes` for an id.
  @Get('changes')
  @Header('Content-Type', 'application/json; charset=utf-8')
  @ApiOperation({
    operationId: 'companyChanges',
    summary: 'Follow every change to the companies, deletions included',
    description:
      "The change feed of the workspace's companies, for keeping a copy in sync without losing " +
      'anything. Start without `cursor`: every live company comes as an upsert. Follow `nextCursor` ' +
      'while `hasMore` is true, upsert by `id`, remove on `delete`; store the cursor after ' +
      'applying a page, and poll with it later. Each company appears once, at its latest change, ' +
      'with its current state; an update that changes nothing is not a change. A change to one of its contacts is a change of the company. ' +
      'Nothing is skipped whatever the order in which concurrent writers commit; a transaction ' +
      'that runs long holds back the changes committed after it started until it ends.',
  })
  @ApiContractResponses(CompanyChangePageDto, 'A page of changes, possibly empty.', {
    gone: true,
    scopes: ['companies:read', 'changes:read'],
  })
  companyChanges(
    @Workspace() workspace: AuthenticatedWorkspace,
    @Query() query: ChangesQueryDto,
  ): Promise<JsonText<CompanyChangePageDto>> {
    return this.companies.changes(workspace.id, query);
  }

  @Get(':id')
  @Header('Content-Type', 'application/json; charset=utf-8')
  @ApiOperation({
    operationId: 'getCompany',
    summary: 'Read one company',
    description:
      'The company with this id, the same object as in the list. Takes no query parameter: any is a 400.',
  })
  @ApiContractResponses(CompanyDto, 'The company.', {
    scopes: ['companies:read'],
    notFound:
      "No company of the key's workspace has this id (whether or not another workspace has one): " +
      'the same response in both cases.',
  })
  getCompany(
    @Workspace() workspace: AuthenticatedWorkspace,
    @Param('id') id: string,
    @Query() _query: NoQueryDto,
  ): Promise<JsonText<CompanyDto>> {
    return this.companies.get(workspace.id, id);
  }
}

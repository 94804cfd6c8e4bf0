import { Param, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Workspace, type AuthenticatedWorkspace } from '../auth/workspace.decorator';
import { StreamRead } from '../changes/stream/stream-read.decorator';
import { JsonRead, ReadController } from '../items/json-read.decorator';
import { CompanyListQueryDto } from './dto/company-list-query.dto';
import {
  CompanyChangeStreamQueryDto,
  CompanyChangesQueryDto,
  CompanyQueryDto,
} from './dto/company-read-queries.dto';
import {
  COMPANY_CHANGE_STREAM,
  COMPANY_CHANGES,
  GET_COMPANY,
  LIST_COMPANIES,
} from './companies.operations';
import { CompaniesService } from './companies.service';

/** Each read is one call of the service, which returns the body PostgreSQL wrote. */
@ReadController('v1/companies', 'companies')
export class CompaniesController {
  constructor(private readonly companies: CompaniesService) {}

  @JsonRead(undefined, LIST_COMPANIES)
  listCompanies(
    @Workspace() workspace: AuthenticatedWorkspace,
    @Query() query: CompanyListQueryDto,
  ) {
    return this.companies.list(workspace.id, query);
  }

  // Declared before `:id`, which would otherwise take `changes` for an id.
  @JsonRead('changes', COMPANY_CHANGES)
  companyChanges(
    @Workspace() workspace: AuthenticatedWorkspace,
    @Query() query: CompanyChangesQueryDto,
  ) {
    return this.companies.changes(workspace.id, query);
  }

  // Answers itself (@Res): lines as they are read, not one body.
  @StreamRead('changes/stream', COMPANY_CHANGE_STREAM)
  companyChangeStream(
    @Workspace() workspace: AuthenticatedWorkspace,
    @Query() query: CompanyChangeStreamQueryDto,
    @Req() request: Request,
    @Res() response: Response,
  ) {
    return this.companies.stream(workspace.id, query, request, response);
  }

  @JsonRead(':id', GET_COMPANY)
  getCompany(
    @Workspace() workspace: AuthenticatedWorkspace,
    @Param('id') id: string,
    @Query() query: CompanyQueryDto,
  ) {
    return this.companies.get(workspace.id, id, query.fields);
  }
}

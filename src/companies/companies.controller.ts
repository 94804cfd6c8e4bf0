import { Param, Query } from '@nestjs/common';
import { Workspace, type AuthenticatedWorkspace } from '../auth/workspace.decorator';
import { ChangesQueryDto } from '../changes/changes-query.dto';
import { JsonRead, ReadController } from '../items/json-read.decorator';
import { CompanyListQueryDto } from './dto/company-list-query.dto';
import { NoQueryDto } from '../http/no-query.dto';
import { COMPANY_CHANGES, GET_COMPANY, LIST_COMPANIES } from './companies.operations';
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
  companyChanges(@Workspace() workspace: AuthenticatedWorkspace, @Query() query: ChangesQueryDto) {
    return this.companies.changes(workspace.id, query);
  }

  @JsonRead(':id', GET_COMPANY)
  getCompany(
    @Workspace() workspace: AuthenticatedWorkspace,
    @Param('id') id: string,
    @Query() _query: NoQueryDto,
  ) {
    return this.companies.get(workspace.id, id);
  }
}

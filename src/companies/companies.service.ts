import { Injectable, NotFoundException } from '@nestjs/common';
import { ChangeCursors } from '../changes/change-cursor';
import { type ChangePage, changeFeedPage, itemById } from '../changes/change-feed';
import type { ChangesQueryDto } from '../changes/changes-query.dto';
import type { JsonText, VersionedJson } from '../http/json-text';
import type { CompanyListQueryDto } from './dto/company-list-query.dto';
import { BodyBudget } from '../items/body-budget';
import { listPage } from '../items/list-page';
import type { Page } from '../items/page';
import { Database } from '../database/database';
import { COMPANY_CHANGES_SQL, COMPANY_LIST, COMPANY_SQL } from './companies.sql';
import type { ItemDeletedDto } from '../changes/dto/change.dto';
import type { CompanyUpsertedDto } from './dto/company-change-page.dto';
import type { CompanyDto } from './dto/company.dto';

@Injectable()
export class CompaniesService {
  constructor(
    private readonly database: Database,
    private readonly cursors: ChangeCursors,
    private readonly bodies: BodyBudget,
  ) {}

  /** A page of the workspace's companies, hottest first, ties by id so that paging is stable. */
  list(workspaceId: string, query: CompanyListQueryDto): Promise<VersionedJson<Page<CompanyDto>>> {
    return listPage(this.database.forWorkspace(workspaceId), COMPANY_LIST, workspaceId, query, {
      budget: this.bodies,
      key: `companies:${workspaceId}`,
    });
  }

  /** One company of the workspace; 404 when the id is not one of its companies, whether or not it exists. */
  async get(workspaceId: string, id: string): Promise<VersionedJson<CompanyDto>> {
    const body = await itemById<CompanyDto>(
      this.database.forWorkspace(workspaceId),
      COMPANY_SQL,
      workspaceId,
      id,
    );
    if (body === null) throw new NotFoundException();
    return body;
  }

  /** A page of the workspace's company change feed after the query's cursor. */
  changes(
    workspaceId: string,
    query: ChangesQueryDto,
  ): Promise<JsonText<ChangePage<CompanyUpsertedDto | ItemDeletedDto>>> {
    return changeFeedPage(
      this.database.forWorkspace(workspaceId),
      this.cursors,
      COMPANY_CHANGES_SQL,
      'companies',
      workspaceId,
      query,
      { budget: this.bodies, key: `companies/changes:${workspaceId}` },
    );
  }
}

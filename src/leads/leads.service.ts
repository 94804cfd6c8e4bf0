import { Injectable, NotFoundException } from '@nestjs/common';
import { ChangeCursors } from '../changes/change-cursor';
import { type ChangePage, changeFeedPage, itemById } from '../changes/change-feed';
import type { ChangesQueryDto } from '../changes/changes-query.dto';
import type { JsonText, VersionedJson } from '../http/json-text';
import type { LeadListQueryDto } from './dto/lead-list-query.dto';
import { BodyBudget } from '../items/body-budget';
import { listPage } from '../items/list-page';
import type { Page } from '../items/page';
import { Database } from '../database/database';
import type { ItemDeletedDto } from '../changes/dto/change.dto';
import type { LeadUpsertedDto } from './dto/lead-change-page.dto';
import type { LeadDto } from './dto/lead.dto';
import { LEAD_CHANGES_SQL, LEAD_LIST, LEAD_SQL } from './leads.sql';

@Injectable()
export class LeadsService {
  constructor(
    private readonly database: Database,
    private readonly cursors: ChangeCursors,
    private readonly bodies: BodyBudget,
  ) {}

  /** A page of the workspace's leads, hottest first, ties by id so that paging is stable. */
  list(workspaceId: string, query: LeadListQueryDto): Promise<VersionedJson<Page<LeadDto>>> {
    return listPage(this.database.forWorkspace(workspaceId), LEAD_LIST, workspaceId, query, {
      budget: this.bodies,
      key: `leads:${workspaceId}`,
    });
  }

  /** One lead of the workspace; 404 when the id is not one of its leads, whether or not it exists. */
  async get(workspaceId: string, id: string): Promise<VersionedJson<LeadDto>> {
    const body = await itemById<LeadDto>(
      this.database.forWorkspace(workspaceId),
      LEAD_SQL,
      workspaceId,
      id,
    );
    if (body === null) throw new NotFoundException();
    return body;
  }

  /** A page of the workspace's lead change feed after the query's cursor. */
  changes(
    workspaceId: string,
    query: ChangesQueryDto,
  ): Promise<JsonText<ChangePage<LeadUpsertedDto | ItemDeletedDto>>> {
    return changeFeedPage(
      this.database.forWorkspace(workspaceId),
      this.cursors,
      LEAD_CHANGES_SQL,
      'leads',
      workspaceId,
      query,
      { budget: this.bodies, key: `leads/changes:${workspaceId}` },
    );
  }
}

import { Controller, Get, Header, Param, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Workspace, type AuthenticatedWorkspace } from '../auth/workspace.decorator';
import { ChangesQueryDto } from '../changes/changes-query.dto';
import type { JsonText } from '../http/json-text';
import { ListQueryDto } from '../http/list-query.dto';
import { NoQueryDto } from '../http/no-query.dto';
import { ApiContractResponses } from '../http/api-responses.decorator';
import { LeadChangePageDto } from './dto/lead-change-page.dto';
import { LeadPageDto } from './dto/lead-page.dto';
import { LeadDto } from './dto/lead.dto';
import { LeadsService } from './leads.service';

@ApiTags('leads')
@ApiBearerAuth()
@Controller('v1/leads')
export class LeadsController {
  constructor(private readonly leads: LeadsService) {}

  @Get()
  // The body comes serialized from the database (see list-page-sql.ts).
  @Header('Content-Type', 'application/json; charset=utf-8')
  @ApiOperation({
    operationId: 'listLeads',
    summary: 'List the qualified leads, hottest first',
    description:
      'The qualified leads of the workspace, sorted by `intentScore` descending (ties by `id`). ' +
      '`since` keeps the leads whose `createdAt` is at or after it.',
  })
  @ApiContractResponses(LeadPageDto, 'A page of leads.', { scopes: ['leads:read'] })
  listLeads(
    @Workspace() workspace: AuthenticatedWorkspace,
    @Query() query: ListQueryDto,
  ): Promise<JsonText<LeadPageDto>> {
    return this.leads.list(workspace.id, query);
  }

  // Declared before `:id`, which would otherwise take `changes` for an id.
  @Get('changes')
  @Header('Content-Type', 'application/json; charset=utf-8')
  @ApiOperation({
    operationId: 'leadChanges',
    summary: 'Follow every change to the leads, deletions included',
    description:
      "The change feed of the workspace's leads, for keeping a copy in sync without losing " +
      'anything. Start without `cursor`: every live lead comes as an upsert. Follow `nextCursor` ' +
      'while `hasMore` is true, upsert by `id`, remove on `delete`; store the cursor after ' +
      'applying a page, and poll with it later. Each lead appears once, at its latest change, ' +
      "with its current state; an update that changes nothing is not a change. Deleting a company deletes its leads: each gets its delete here. A change of its company's name is a change of the lead. " +
      'Nothing is skipped whatever the order in which concurrent writers commit; a transaction ' +
      'that runs long holds back the changes committed after it started until it ends.',
  })
  @ApiContractResponses(LeadChangePageDto, 'A page of changes, possibly empty.', {
    gone: true,
    scopes: ['leads:read', 'changes:read'],
  })
  leadChanges(
    @Workspace() workspace: AuthenticatedWorkspace,
    @Query() query: ChangesQueryDto,
  ): Promise<JsonText<LeadChangePageDto>> {
    return this.leads.changes(workspace.id, query);
  }

  @Get(':id')
  @Header('Content-Type', 'application/json; charset=utf-8')
  @ApiOperation({
    operationId: 'getLead',
    summary: 'Read one lead',
    description:
      'The lead with this id, the same object as in the list. Takes no query parameter: any is a 400.',
  })
  @ApiContractResponses(LeadDto, 'The lead.', {
    scopes: ['leads:read'],
    notFound:
      "No lead of the key's workspace has this id (whether or not another workspace has one): " +
      'the same response in both cases.',
  })
  getLead(
    @Workspace() workspace: AuthenticatedWorkspace,
    @Param('id') id: string,
    @Query() _query: NoQueryDto,
  ): Promise<JsonText<LeadDto>> {
    return this.leads.get(workspace.id, id);
  }
}

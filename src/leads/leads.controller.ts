import { Controller, Get, Header, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Workspace, type AuthenticatedWorkspace } from '../auth/workspace.decorator';
import type { JsonText } from '../common/json-text';
import { ListQueryDto } from '../common/list-query.dto';
import { ApiContractResponses } from '../openapi/api-responses.decorator';
import { LeadPageDto } from './dto/lead-page.dto';
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
  @ApiContractResponses(LeadPageDto, 'A page of leads.')
  listLeads(
    @Workspace() workspace: AuthenticatedWorkspace,
    @Query() query: ListQueryDto,
  ): Promise<JsonText<LeadPageDto>> {
    return this.leads.list(workspace.id, query);
  }
}

import { Param, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Workspace, type AuthenticatedWorkspace } from '../auth/workspace.decorator';
import { StreamRead } from '../changes/stream/stream-read.decorator';
import { JsonRead, ReadController } from '../items/json-read.decorator';
import { LeadListQueryDto } from './dto/lead-list-query.dto';
import {
  LeadChangeStreamQueryDto,
  LeadChangesQueryDto,
  LeadQueryDto,
} from './dto/lead-read-queries.dto';
import { GET_LEAD, LEAD_CHANGE_STREAM, LEAD_CHANGES, LIST_LEADS } from './leads.operations';
import { LeadsService } from './leads.service';

/** Each read is one call of the service, which returns the body PostgreSQL wrote. */
@ReadController('v1/leads', 'leads')
export class LeadsController {
  constructor(private readonly leads: LeadsService) {}

  @JsonRead(undefined, LIST_LEADS)
  listLeads(@Workspace() workspace: AuthenticatedWorkspace, @Query() query: LeadListQueryDto) {
    return this.leads.list(workspace.id, query);
  }

  // Declared before `:id`, which would otherwise take `changes` for an id.
  @JsonRead('changes', LEAD_CHANGES)
  leadChanges(@Workspace() workspace: AuthenticatedWorkspace, @Query() query: LeadChangesQueryDto) {
    return this.leads.changes(workspace.id, query);
  }

  // Answers itself (@Res): lines as they are read, not one body.
  @StreamRead('changes/stream', LEAD_CHANGE_STREAM)
  leadChangeStream(
    @Workspace() workspace: AuthenticatedWorkspace,
    @Query() query: LeadChangeStreamQueryDto,
    @Req() request: Request,
    @Res() response: Response,
  ) {
    return this.leads.stream(workspace.id, query, request, response);
  }

  @JsonRead(':id', GET_LEAD)
  getLead(
    @Workspace() workspace: AuthenticatedWorkspace,
    @Param('id') id: string,
    @Query() query: LeadQueryDto,
  ) {
    return this.leads.get(workspace.id, id, query.fields);
  }
}

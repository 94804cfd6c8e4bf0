import { Param, Query } from '@nestjs/common';
import { Workspace, type AuthenticatedWorkspace } from '../auth/workspace.decorator';
import { ChangesQueryDto } from '../changes/changes-query.dto';
import { JsonRead, ReadController } from '../items/json-read.decorator';
import { LeadListQueryDto } from './dto/lead-list-query.dto';
import { NoQueryDto } from '../http/no-query.dto';
import { GET_LEAD, LEAD_CHANGES, LIST_LEADS } from './leads.operations';
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
  leadChanges(@Workspace() workspace: AuthenticatedWorkspace, @Query() query: ChangesQueryDto) {
    return this.leads.changes(workspace.id, query);
  }

  @JsonRead(':id', GET_LEAD)
  getLead(
    @Workspace() workspace: AuthenticatedWorkspace,
    @Param('id') id: string,
    @Query() _query: NoQueryDto,
  ) {
    return this.leads.get(workspace.id, id);
  }
}

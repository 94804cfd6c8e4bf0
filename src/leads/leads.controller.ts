import { Controller, Get, Query } from '@nestjs/common';
import { Workspace, type AuthenticatedWorkspace } from '../auth/workspace.decorator';
import { ListQueryDto } from '../common/list-query.dto';
import type { Page } from '../common/page';
import type { LeadDto } from './dto/lead.dto';
import { LeadsService } from './leads.service';

@Controller('v1/leads')
export class LeadsController {
  constructor(private readonly leads: LeadsService) {}

  @Get()
  listLeads(
    @Workspace() workspace: AuthenticatedWorkspace,
    @Query() query: ListQueryDto,
  ): Promise<Page<LeadDto>> {
    return this.leads.list(workspace.id, query);
  }
}

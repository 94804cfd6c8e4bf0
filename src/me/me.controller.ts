import { Controller, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { Workspace, type AuthenticatedWorkspace } from '../auth/workspace.decorator';
import { JsonRead } from '../items/json-read.decorator';
import { NoQueryDto } from '../http/no-query.dto';
import type { WorkspaceDto } from './dto/workspace.dto';
import { GET_ME } from './me.operations';

@ApiTags('workspace')
@ApiBearerAuth()
@Controller('v1/me')
export class MeController {
  /** The key's workspace, already loaded by the key guard: no query of its own. */
  @JsonRead(undefined, GET_ME)
  getMe(@Workspace() workspace: AuthenticatedWorkspace, @Query() _query: NoQueryDto): WorkspaceDto {
    return { id: workspace.id, name: workspace.name, plan: workspace.plan };
  }
}

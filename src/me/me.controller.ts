import { Query } from '@nestjs/common';
import { Workspace, type AuthenticatedWorkspace } from '../auth/workspace.decorator';
import { JsonRead, ReadController } from '../items/json-read.decorator';
import { NoQueryDto } from '../http/no-query.dto';
import type { WorkspaceDto } from './dto/workspace.dto';
import { GET_ME } from './me.operations';

@ReadController('v1/me', 'workspace')
export class MeController {
  /** The key's workspace, already loaded by the key guard: no query of its own. */
  @JsonRead(undefined, GET_ME)
  getMe(@Workspace() workspace: AuthenticatedWorkspace, @Query() _query: NoQueryDto): WorkspaceDto {
    return { id: workspace.id, name: workspace.name, plan: workspace.plan };
  }
}

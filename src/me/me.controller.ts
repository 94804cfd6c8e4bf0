import { Controller, Get, Query } from '@nestjs/common';
import { Workspace, type AuthenticatedWorkspace } from '../auth/workspace.decorator';
import { NoQueryDto } from '../common/no-query.dto';

@Controller('v1/me')
export class MeController {
  /** The key's workspace, already loaded by the key guard: no query of its own. */
  @Get()
  getMe(
    @Workspace() workspace: AuthenticatedWorkspace,
    @Query() _query: NoQueryDto,
  ): AuthenticatedWorkspace {
    return { id: workspace.id, name: workspace.name, plan: workspace.plan };
  }
}

import { Controller, Get, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Workspace, type AuthenticatedWorkspace } from '../auth/workspace.decorator';
import { NoQueryDto } from '../http/no-query.dto';
import { ApiContractResponses } from '../http/api-responses.decorator';
import { WorkspaceDto } from './dto/workspace.dto';

@ApiTags('workspace')
@ApiBearerAuth()
@Controller('v1/me')
export class MeController {
  /** The key's workspace, already loaded by the key guard: no query of its own. */
  @Get()
  @ApiOperation({
    operationId: 'getMe',
    summary: 'Check a key',
    description:
      'Confirms that the key is valid and names the workspace it targets; no business data. ' +
      'Takes no parameter: any is a 400.',
  })
  @ApiContractResponses(WorkspaceDto, 'The key is valid and targets this workspace.')
  getMe(@Workspace() workspace: AuthenticatedWorkspace, @Query() _query: NoQueryDto): WorkspaceDto {
    return { id: workspace.id, name: workspace.name, plan: workspace.plan };
  }
}

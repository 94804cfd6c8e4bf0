import { ApiProperty } from '@nestjs/swagger';
import { Plan } from '../../generated/prisma/enums';

/** What `GET /v1/me` returns: the key's workspace, and no business data. */
export class WorkspaceDto {
  @ApiProperty({ description: 'Workspace identifier.', example: 'ws_8mZt2QpX4cVb7nLk' })
  id!: string;

  @ApiProperty({ description: 'Workspace name.', example: 'Acme Analytics' })
  name!: string;

  @ApiProperty({
    enum: Plan,
    enumName: 'Plan',
    description:
      'Plan of the workspace. API access comes with `growth`; a key of a `starter` workspace ' +
      'gets the 401 instead.',
  })
  plan!: Plan;
}

import { Module } from '@nestjs/common';
import { ApiKeyAdminService } from './api-key-admin.service';
import { WorkspacesService } from './workspaces.service';

/** Workspaces and their keys, as the admin tool manages them (Prisma). */
@Module({
  providers: [WorkspacesService, ApiKeyAdminService],
  exports: [WorkspacesService, ApiKeyAdminService],
})
export class WorkspacesModule {}

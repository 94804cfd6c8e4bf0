import { Module } from '@nestjs/common';
import { WorkspacesModule } from '../workspaces/workspaces.module';
import { DemoSeedService } from './demo-seed.service';
import { ImportService } from './import.service';

/** Loading data into a workspace: import files and the demo data set. */
@Module({
  imports: [WorkspacesModule],
  providers: [ImportService, DemoSeedService],
  exports: [ImportService, DemoSeedService],
})
export class ImportModule {}

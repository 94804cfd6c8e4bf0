import { Module } from '@nestjs/common';
import { WorkspacesModule } from '../workspaces/workspaces.module';
import { DemoSeedService } from './demo-seed.service';
import { ImportService } from './import.service';
import { VisitImportService } from './visit-import.service';

/** Loading data into a workspace: import files (companies and leads; visits) and the demo data. */
@Module({
  imports: [WorkspacesModule],
  providers: [ImportService, VisitImportService, DemoSeedService],
  exports: [ImportService, VisitImportService, DemoSeedService],
})
export class ImportModule {}

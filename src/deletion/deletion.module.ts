import { Module } from '@nestjs/common';
import { ChangePruningService } from './change-pruning.service';
import { DeletionService } from './deletion.service';

/** Taking data out of a workspace: items (all or nothing), then, later, their deletion records. */
@Module({
  providers: [DeletionService, ChangePruningService],
  exports: [DeletionService, ChangePruningService],
})
export class DeletionModule {}

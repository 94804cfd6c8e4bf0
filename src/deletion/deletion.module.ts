import { Module } from '@nestjs/common';
import { ChangePruningService } from './change-pruning.service';
import { DeletionService } from './deletion.service';
import { VisitPruningService } from './visit-pruning.service';

/**
 * Taking data out of a workspace: items (all or nothing), then, later, their deletion records; and
 * visits past their retention, by month.
 */
@Module({
  providers: [DeletionService, ChangePruningService, VisitPruningService],
  exports: [DeletionService, ChangePruningService, VisitPruningService],
})
export class DeletionModule {}

import { Module } from '@nestjs/common';
import { ChangesModule } from '../changes/changes.module';
import { ItemsModule } from '../items/items.module';
import { VisitsController } from './visits.controller';
import { VisitsService } from './visits.service';

@Module({
  imports: [ChangesModule, ItemsModule],
  controllers: [VisitsController],
  providers: [VisitsService],
  // The MCP tools call the same service (src/mcp).
  exports: [VisitsService],
})
export class VisitsModule {}

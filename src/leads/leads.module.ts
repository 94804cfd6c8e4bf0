import { Module } from '@nestjs/common';
import { ChangesModule } from '../changes/changes.module';
import { ItemsModule } from '../items/items.module';
import { LeadsController } from './leads.controller';
import { LeadsService } from './leads.service';

@Module({
  imports: [ChangesModule, ItemsModule],
  controllers: [LeadsController],
  providers: [LeadsService],
  // The MCP tools call the same service (src/mcp).
  exports: [LeadsService],
})
export class LeadsModule {}

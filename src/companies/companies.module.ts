import { Module } from '@nestjs/common';
import { ChangesModule } from '../changes/changes.module';
import { ItemsModule } from '../items/items.module';
import { CompaniesController } from './companies.controller';
import { CompaniesService } from './companies.service';

@Module({
  imports: [ChangesModule, ItemsModule],
  controllers: [CompaniesController],
  providers: [CompaniesService],
  // The MCP tools call the same service (src/mcp).
  exports: [CompaniesService],
})
export class CompaniesModule {}

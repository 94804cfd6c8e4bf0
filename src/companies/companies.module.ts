import { Module } from '@nestjs/common';
import { ChangesModule } from '../changes/changes.module';
import { ItemsModule } from '../items/items.module';
import { CompaniesController } from './companies.controller';
import { CompaniesService } from './companies.service';

@Module({
  imports: [ChangesModule, ItemsModule],
  controllers: [CompaniesController],
  providers: [CompaniesService],
})
export class CompaniesModule {}

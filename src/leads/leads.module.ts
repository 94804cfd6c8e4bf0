import { Module } from '@nestjs/common';
import { ChangesModule } from '../changes/changes.module';
import { LeadsController } from './leads.controller';
import { LeadsService } from './leads.service';

@Module({
  imports: [ChangesModule],
  controllers: [LeadsController],
  providers: [LeadsService],
})
export class LeadsModule {}

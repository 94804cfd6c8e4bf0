import { Module } from '@nestjs/common';
import { ItemsModule } from '../items/items.module';
import { ChangeCursors } from './change-cursor';
import { ChangeStreams } from './stream/change-streams';

/** What both change feeds share: the signing of their cursors, and their streams' limits. */
@Module({
  imports: [ItemsModule],
  providers: [ChangeCursors, ChangeStreams],
  exports: [ChangeCursors, ChangeStreams],
})
export class ChangesModule {}

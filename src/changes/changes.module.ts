import { Module } from '@nestjs/common';
import { ChangeCursors } from './change-cursor';
import { ChangeStreams } from './change-streams';

/** What both change feeds share: the signing of their cursors, and their streams' limits. */
@Module({
  providers: [ChangeCursors, ChangeStreams],
  exports: [ChangeCursors, ChangeStreams],
})
export class ChangesModule {}

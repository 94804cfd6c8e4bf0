import { Module } from '@nestjs/common';
import { ChangeCursors } from './change-cursor';

/** What both change feeds share: the signing of their cursors. */
@Module({
  providers: [ChangeCursors],
  exports: [ChangeCursors],
})
export class ChangesModule {}

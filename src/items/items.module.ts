import { Module } from '@nestjs/common';
import { BodyBudget } from './body-budget';
import { SignedCursors } from './signed-cursors';

/**
 * What the lists and feeds of every item share: the heap budget of large bodies (one per process),
 * and the signing of their cursors.
 */
@Module({
  providers: [BodyBudget, SignedCursors],
  exports: [BodyBudget, SignedCursors],
})
export class ItemsModule {}

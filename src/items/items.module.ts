import { Module } from '@nestjs/common';
import { BodyBudget } from './body-budget';

/** What the lists and feeds of every item share: the heap budget of large bodies (one per process). */
@Module({
  providers: [BodyBudget],
  exports: [BodyBudget],
})
export class ItemsModule {}

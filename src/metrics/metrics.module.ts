import { Module } from '@nestjs/common';
import { ChangesModule } from '../changes/changes.module';
import { ItemsModule } from '../items/items.module';
import { MetricsService } from './metrics.service';

/** Prometheus metrics on METRICS_PORT (see MetricsService); off when it is unset. */
@Module({ imports: [ChangesModule, ItemsModule], providers: [MetricsService] })
export class MetricsModule {}

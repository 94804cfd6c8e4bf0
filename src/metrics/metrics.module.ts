import { Module } from '@nestjs/common';
import { MetricsService } from './metrics.service';

/** Prometheus metrics on METRICS_PORT (see MetricsService); off when it is unset. */
@Module({ providers: [MetricsService] })
export class MetricsModule {}

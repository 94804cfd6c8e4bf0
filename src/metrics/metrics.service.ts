import { Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { Server } from 'node:http';
import { InjectThrottlerStorage, ThrottlerStorage } from '@nestjs/throttler';
import { ChangeStreams } from '../changes/stream/change-streams';
import { FeedHoldBack } from '../changes/feed-hold-back';
import { Clock } from '../common/clock';
import { FailOpenThrottlerStorage } from '../rate-limit/fail-open-throttler.storage';
import { Environment } from '../config/environment';
import { Database } from '../database/database';
import { BodyBudget } from '../items/body-budget';
import { InFlightLimiter } from '../rate-limit/in-flight-limiter';
import { ApiMetrics } from './api-metrics';
import { closeServer, createMetricsServer, listenForScrapes } from './metrics-server';
import { timeRequests } from './request-timing';

/**
 * With METRICS_PORT set: the metrics, the timing of every API request, and the server of GET
 * /metrics, started with the application (before the API listens) and closed with it (after the
 * API's server has closed, in the graceful shutdown). Unset: nothing at all, no per-request cost.
 */
@Injectable()
export class MetricsService implements OnApplicationBootstrap, OnModuleDestroy {
  private server?: Server;

  constructor(
    private readonly environment: Environment,
    private readonly database: Database,
    private readonly inFlight: InFlightLimiter,
    private readonly streams: ChangeStreams,
    private readonly bodies: BodyBudget,
    private readonly adapterHost: HttpAdapterHost,
    @InjectThrottlerStorage() private readonly rateLimitStore: ThrottlerStorage,
    private readonly clock: Clock,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const port = this.environment.METRICS_PORT;
    if (port === undefined) return;
    const feedHoldBack = new FeedHoldBack(this.database, () => this.clock.now());
    const metrics = new ApiMetrics({
      pools: { statements: this.database.pool, priority: this.database.priorityPool },
      fairQueue: this.database.fairQueue,
      requestsInFlight: () => this.inFlight.requestsInFlight,
      changeStreams: this.streams,
      largeBodiesHeapBytes: () => this.bodies.heldBytes,
      feedHoldBackSeconds: () => feedHoldBack.seconds(),
      rateLimitStore:
        this.rateLimitStore instanceof FailOpenThrottlerStorage ? this.rateLimitStore : undefined,
    });
    timeRequests(this.adapterHost.httpAdapter.getHttpServer() as Server, metrics);
    this.server = createMetricsServer(metrics.registry);
    await listenForScrapes(this.server, port);
  }

  async onModuleDestroy(): Promise<void> {
    if (this.server?.listening) await closeServer(this.server);
  }
}

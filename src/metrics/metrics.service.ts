import { Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { Server } from 'node:http';
import { Environment } from '../config/environment';
import { Database } from '../database/database';
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
    private readonly adapterHost: HttpAdapterHost,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const port = this.environment.METRICS_PORT;
    if (port === undefined) return;
    const metrics = new ApiMetrics({
      pool: this.database.pool,
      fairQueue: this.database.fairQueue,
      requestsInFlight: () => this.inFlight.requestsInFlight,
    });
    timeRequests(this.adapterHost.httpAdapter.getHttpServer() as Server, metrics);
    this.server = createMetricsServer(metrics.registry);
    await listenForScrapes(this.server, port);
  }

  async onModuleDestroy(): Promise<void> {
    if (this.server?.listening) await closeServer(this.server);
  }
}

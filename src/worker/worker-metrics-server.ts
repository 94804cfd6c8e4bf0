import type { BeforeApplicationShutdown, OnApplicationBootstrap } from '@nestjs/common';
import type { Server } from 'node:http';
import type { Pool } from 'pg';
import { closeServer, createMetricsServer, listenForScrapes } from '../metrics/metrics-server';
import type { WorkerMetrics } from './worker-metrics';
import { workerProbes } from './worker-probes';

/**
 * The worker's port (METRICS_PORT): its metrics and its probes. Listening once the context is up,
 * closed after the worker has drained (Nest's shutdown hooks run after every module's destroy
 * hook), so that the readiness probe says "not taking jobs" while it drains.
 */
export class WorkerMetricsServer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly server: Server;

  constructor(
    private readonly port: number,
    metrics: WorkerMetrics,
    pool: Pick<Pool, 'query'>,
    running: () => boolean,
  ) {
    this.server = createMetricsServer(metrics.registry, workerProbes(pool, running));
  }

  onApplicationBootstrap(): Promise<void> {
    return listenForScrapes(this.server, this.port);
  }

  async beforeApplicationShutdown(): Promise<void> {
    if (this.server.listening) await closeServer(this.server);
  }
}

import { Module } from '@nestjs/common';
import { type LevelWithSilent, pino, type Logger } from 'pino';
import { ConfigModule } from '../config/config.module';
import { Environment, requireWebhookSecretKey } from '../config/environment';
import { Database } from '../database/database';
import { DatabaseModule } from '../database/database.module';
import { loggerOptions } from '../logging/log-options';
import { stdoutLog } from '../logging/stdout-log';
import { readBacklog } from './sql/backlog.sql';
import { WebhookWorker } from './webhook-worker';
import { WorkerMetrics } from './worker-metrics';
import { WorkerMetricsServer } from './worker-metrics-server';

/** The worker's root logger: the server's line format, and which process wrote it. */
export const WORKER_LOGGER = Symbol('WORKER_LOGGER');
/** The worker's metrics with METRICS_PORT set; null without (nothing is counted). */
const WORKER_METRICS = Symbol('WORKER_METRICS');

export function workerLogger(level: LevelWithSilent): Logger {
  return pino({ ...loggerOptions(level), base: { service: 'webhook-worker' } }, stdoutLog());
}

/**
 * The webhook worker process, wired as the server and the admin tool are: a Nest application
 * context on the validated environment (ConfigModule) and the one door to the database (its
 * Database's pool). WebhookWorker starts once the context is up and drains when it closes, before
 * the database's pools do (module destroy hooks run from the root down).
 */
@Module({
  imports: [ConfigModule, DatabaseModule],
  providers: [
    {
      provide: WORKER_LOGGER,
      inject: [Environment],
      useFactory: (environment: Environment): Logger => workerLogger(environment.LOG_LEVEL),
    },
    {
      provide: WORKER_METRICS,
      inject: [Environment, Database],
      useFactory: (environment: Environment, database: Database): WorkerMetrics | null =>
        environment.METRICS_PORT === undefined
          ? null
          : new WorkerMetrics(() => readBacklog(database.pool, new Date())),
    },
    {
      provide: WebhookWorker,
      inject: [Environment, Database, WORKER_LOGGER, WORKER_METRICS],
      useFactory: (
        environment: Environment,
        database: Database,
        logger: Logger,
        metrics: WorkerMetrics | null,
      ) =>
        new WebhookWorker({
          pool: database.pool,
          // pg-boss's own connections; through PgBouncer too: it holds nothing across transactions.
          databaseUrl: environment.DATABASE_URL,
          secretKey: requireWebhookSecretKey(environment),
          allowPrivateNetworks: environment.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
          allowHttp: environment.WEBHOOK_ALLOW_HTTP,
          timeoutMs: environment.WEBHOOK_TIMEOUT_MS,
          visitRetentionDays: environment.VISIT_RETENTION_DAYS,
          logger,
          onRecorded: metrics ? (outcome, lag) => metrics.recorded(outcome, lag) : undefined,
        }),
    },
    {
      provide: WorkerMetricsServer,
      inject: [Environment, Database, WORKER_METRICS, WebhookWorker],
      useFactory: (
        environment: Environment,
        database: Database,
        metrics: WorkerMetrics | null,
        worker: WebhookWorker,
      ) =>
        environment.METRICS_PORT === undefined || metrics === null
          ? null
          : new WorkerMetricsServer(
              environment.METRICS_PORT,
              metrics,
              database.pool,
              () => worker.running,
            ),
    },
  ],
})
export class WorkerModule {}

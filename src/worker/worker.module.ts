import { Module } from '@nestjs/common';
import { type LevelWithSilent, pino, type Logger } from 'pino';
import { ConfigModule } from '../config/config.module';
import { Environment, requireWebhookSecretKey } from '../config/environment';
import { Database } from '../database/database';
import { DatabaseModule } from '../database/database.module';
import { loggerOptions } from '../logging/log-options';
import { WebhookWorker } from './webhook-worker';

/** The worker's root logger: the server's line format, and which process wrote it. */
export const WORKER_LOGGER = Symbol('WORKER_LOGGER');

export function workerLogger(level: LevelWithSilent): Logger {
  return pino({ ...loggerOptions(level), base: { service: 'webhook-worker' } });
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
      provide: WebhookWorker,
      inject: [Environment, Database, WORKER_LOGGER],
      useFactory: (environment: Environment, database: Database, logger: Logger) =>
        new WebhookWorker({
          pool: database.pool,
          // pg-boss's own connections; through PgBouncer too: it holds nothing across transactions.
          databaseUrl: environment.DATABASE_URL,
          secretKey: requireWebhookSecretKey(environment),
          allowPrivateNetworks: environment.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
          allowHttp: environment.WEBHOOK_ALLOW_HTTP,
          timeoutMs: environment.WEBHOOK_TIMEOUT_MS,
          logger,
        }),
    },
  ],
})
export class WorkerModule {}

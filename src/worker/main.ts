import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { existsSync } from 'node:fs';
import type { Logger } from 'pino';
import { StartupError } from '../common/startup-error';
import { Environment } from '../config/environment';
import { AppLogger } from '../logging/app-logger';
import { WORKER_LOGGER, workerLogger, WorkerModule } from './worker.module';

/**
 * `npm run start:worker`: the webhook worker, from the same build and image as the server.
 * SIGTERM (or SIGINT) drains it: the attempts in flight finish and are recorded, then it exits 0.
 */
async function main(): Promise<void> {
  if (existsSync('.env')) process.loadEnvFile('.env');
  // The context is up once the worker has started (its bootstrap hook). Nest's own lines are the
  // worker's JSON lines once it has its logger; a failure to start is main's one fatal line.
  const app = await NestFactory.createApplicationContext(WorkerModule, {
    logger: false,
    abortOnError: false,
  });
  const logger = app.get<Logger>(WORKER_LOGGER);
  app.useLogger(new AppLogger(logger));
  if (app.get(Environment).WEBHOOK_ALLOW_PRIVATE_NETWORKS) {
    logger.warn('WEBHOOK_ALLOW_PRIVATE_NETWORKS is on: webhooks may reach private addresses');
  }
  const shutDown = (signal: NodeJS.Signals) => {
    logger.info(`${signal}: draining the webhook worker`);
    // The worker drains in its destroy hook, before the database's pools close.
    app.close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'webhook worker did not stop cleanly');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', shutDown);
  process.once('SIGINT', shutDown);
}

main().catch((error: unknown) => {
  const message = error instanceof StartupError ? error.message : String(error);
  workerLogger('info').fatal(message);
  process.exit(1);
});

import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { Logger } from 'pino';
import { StartupError } from '../common/startup-error';
import { Environment } from '../config/environment';
import { AppLogger } from '../logging/app-logger';
import { stopTracing } from '../tracing/tracing';
import { WORKER_LOGGER, workerLogger, WorkerModule } from './worker.module';

/**
 * The webhook worker process (worker/main.ts). SIGTERM (or SIGINT) drains it: the attempts in
 * flight finish and are recorded, then it exits 0.
 */
export async function runWorker(): Promise<void> {
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
  let draining = false;
  const shutDown = (signal: NodeJS.Signals) => {
    // Kept for the whole drain, which ignores the signals after the first: a Ctrl-C on `npm run`
    // comes twice (from the terminal and forwarded by npm), and the second must not kill it.
    if (draining) return;
    draining = true;
    logger.info(`${signal}: draining the webhook worker`);
    // The worker drains in its destroy hook, before the database's pools close; then the last
    // attempts' spans go, when tracing is on.
    app
      .close()
      .then(stopTracing)
      .then(
        () => process.exit(0),
        (error: unknown) => {
          logger.error({ err: error }, 'webhook worker did not stop cleanly');
          process.exit(1);
        },
      );
  };
  process.on('SIGTERM', shutDown);
  process.on('SIGINT', shutDown);
}

/** A failure to start: one fatal line that says why, then exit 1. */
export function failedToStart(error: unknown): never {
  const message = error instanceof StartupError ? error.message : String(error);
  workerLogger('info').fatal(message);
  process.exit(1);
}

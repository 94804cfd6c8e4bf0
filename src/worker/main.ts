import 'reflect-metadata';
import { existsSync } from 'node:fs';
import { pino } from 'pino';
import { requireWebhookSecretKey, validateEnvironment } from '../config/environment';
import { StartupError } from '../common/startup-error';
import { sessionSettingsSource } from '../database/pool-config';
import { loggerOptions } from '../logging/log-options';
import { WebhookWorker } from './webhook-worker';

/**
 * `npm run start:worker`: the webhook worker, from the same build and image as the server.
 * SIGTERM (or SIGINT) drains it: the attempts in flight finish and are recorded, then it exits.
 */
async function main(): Promise<void> {
  if (existsSync('.env')) process.loadEnvFile('.env');
  const environment = validateEnvironment(process.env);
  // The server's line format (level names, ISO times, keys redacted), and which process wrote it.
  const logger = pino({
    ...loggerOptions(environment.LOG_LEVEL),
    base: { service: 'webhook-worker' },
  });
  const worker = new WebhookWorker({
    // Through PgBouncer too: pg-boss and the dispatcher hold nothing across transactions.
    databaseUrl: environment.DATABASE_URL,
    sessionSettings: sessionSettingsSource(environment.DATABASE_POOLER),
    secretKey: requireWebhookSecretKey(environment),
    allowPrivateNetworks: environment.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
    allowHttp: environment.WEBHOOK_ALLOW_HTTP,
    timeoutMs: environment.WEBHOOK_TIMEOUT_MS,
    logger,
  });
  if (environment.WEBHOOK_ALLOW_PRIVATE_NETWORKS) {
    logger.warn('WEBHOOK_ALLOW_PRIVATE_NETWORKS is on: webhooks may reach private addresses');
  }
  await worker.start();
  const shutDown = (signal: NodeJS.Signals) => {
    logger.info(`${signal}: draining the webhook worker`);
    worker.stop().then(
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
  pino({ ...loggerOptions('info'), base: { service: 'webhook-worker' } }).fatal(message);
  process.exit(1);
});

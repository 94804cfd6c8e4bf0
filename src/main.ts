import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { existsSync } from 'node:fs';
import { AppModule } from './app.module';
import { APP_OPTIONS, createHttpAdapter } from './app.setup';
import { createStartLogger, type StartLogger } from './logging/start-logger';
import { exitOnSignalUntilServing } from './server/start-signals';
import { startServer } from './server/start-server';

let logger: StartLogger | undefined;

async function bootstrap(): Promise<void> {
  // Until the server listens and drains by itself, a signal exits at once (start-signals.ts).
  exitOnSignalUntilServing();
  if (existsSync('.env')) process.loadEnvFile('.env');
  // Nest's own messages are JSON lines like the request log from the first one: through pino
  // while the application is created, then through the LoggingModule's logger (startServer).
  logger = createStartLogger();
  const app = await NestFactory.create<NestExpressApplication>(AppModule, createHttpAdapter(), {
    ...APP_OPTIONS,
    logger,
  });
  await startServer(app);
}

bootstrap().catch((error: unknown) => {
  // One JSON line, at fatal, that says why (a bad variable, a busy port, a database to migrate).
  (logger ?? createStartLogger()).failed(error);
  process.exit(1);
});

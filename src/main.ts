import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { existsSync } from 'node:fs';
import { Logger } from 'nestjs-pino';
import { AppModule } from './app.module';
import { APP_OPTIONS, configureApp } from './app.setup';
import { Environment } from './config/environment';
import { enableGracefulShutdown } from './server/graceful-shutdown';
import { setServerTimeouts } from './server/server-timeouts';

async function bootstrap(): Promise<void> {
  if (existsSync('.env')) process.loadEnvFile('.env');
  // Nest's own messages wait for pino (JSON lines like the request log), from the first one.
  const app = configureApp(
    await NestFactory.create<NestExpressApplication>(AppModule, {
      ...APP_OPTIONS,
      bufferLogs: true,
    }),
  );
  app.useLogger(app.get(Logger));
  setServerTimeouts(app.getHttpServer());
  // Not enableShutdownHooks(): see graceful-shutdown.ts for the order it gets wrong.
  enableGracefulShutdown(app);
  await app.listen(app.get(Environment).PORT);
}

bootstrap().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});

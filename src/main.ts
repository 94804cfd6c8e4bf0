import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { existsSync } from 'node:fs';
import { AppModule } from './app.module';
import { Environment } from './config/environment';

async function bootstrap(): Promise<void> {
  if (existsSync('.env')) process.loadEnvFile('.env');
  // abortOnError: false, so that a bad configuration ends in a clear message and exit 1 below.
  const app = await NestFactory.create<NestExpressApplication>(AppModule, { abortOnError: false });
  app.enableShutdownHooks();
  await app.listen(app.get(Environment).PORT);
}

bootstrap().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});

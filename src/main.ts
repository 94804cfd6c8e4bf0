import { existsSync } from 'node:fs';
import { startTracing } from './tracing/tracing';

/*
 * `npm run start:prod`: the server alone (server/serve.ts); the container's command applies the
 * migrations first (server/entrypoint.ts). Tracing, when OTEL_EXPORTER_OTLP_ENDPOINT asks for it,
 * starts before the server's modules load, so that its instrumentations patch them as they do.
 */
async function main(): Promise<void> {
  if (existsSync('.env')) process.loadEnvFile('.env');
  await startTracing('visitor-read-api');
  const { serve } = await import('./server/serve.js');
  await serve();
}

void main();

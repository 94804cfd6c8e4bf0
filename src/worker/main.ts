import { existsSync } from 'node:fs';
import { startTracing } from '../tracing/tracing';

/*
 * `npm run start:worker`: the webhook worker, from the same build and image as the server
 * (run-worker.ts). Tracing, when OTEL_EXPORTER_OTLP_ENDPOINT asks for it, starts before the
 * worker's modules load, so that its instrumentations patch them as they do.
 */
async function main(): Promise<void> {
  if (existsSync('.env')) process.loadEnvFile('.env');
  await startTracing('visitor-read-api-webhook-worker');
  const { runWorker, failedToStart } = await import('./run-worker.js');
  await runWorker().catch(failedToStart);
}

void main();

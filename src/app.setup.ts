import type { NestApplicationOptions } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { setResponseHeaders } from './common/response-headers';

/**
 * What the application needs beyond AppModule, shared by the server, the demo and the tests so
 * that they all run exactly the same thing.
 */
export const APP_OPTIONS = {
  // Read-only API: a request body is never read, so it can never fail a request either.
  bodyParser: false,
  // A bad configuration ends in a clear message and exit 1 (see main.ts), not an abort.
  abortOnError: false,
} satisfies NestApplicationOptions;

export function configureApp(app: NestExpressApplication): NestExpressApplication {
  app.disable('x-powered-by');
  // Before Nest's router: even a request that fails routing (a malformed path) gets the headers.
  app.use(setResponseHeaders);
  return app;
}

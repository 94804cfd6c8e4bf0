import type { NestApplicationOptions } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { ExpressAdapter, NestExpressApplication } from '@nestjs/platform-express';
import type { Express } from 'express';
import type { Logger } from 'pino';
import { AppModule } from './app.module';
import { ROOT_LOGGER } from './logging/app-logger';
import { logRequests } from './logging/request-log';
import { answerClientErrors, serveAnyExpectation } from './http/client-error';
import { ApiExpressAdapter } from './http/api-express-adapter';
import { compressJsonAnswers } from './http/compression';
import { conditionalDocument } from './http/conditional-requests';
import { prepareRequest } from './http/prepare-request';
import { parseQueryString } from './http/query-string';
import { Environment } from './config/environment';
import { trustProxySetting } from './config/trust-proxy';
import { McpEndpoint } from './mcp/mcp-endpoint';
import { InFlightOnArrival } from './rate-limit/in-flight-on-arrival';
import { buildOpenApiDocument, serveApiDocs } from './openapi/openapi';

/**
 * What the application needs beyond AppModule, shared by the server, the demo and the tests so
 * that they all run exactly the same thing.
 */
export const APP_OPTIONS = {
  // Read-only API: a request body is never read, so it can never fail a request either.
  bodyParser: false,
  // A bad configuration ends in a clear message and exit 1 (see server/serve.ts), not an abort.
  abortOnError: false,
} satisfies NestApplicationOptions;

/**
 * The Express application every server of this API runs on (pass it to NestFactory.create or
 * createNestApplication). Paths are case-sensitive: `/v1/companies/Changes` is the company of that
 * id, not the change feed, and `/V1/ME` is a 404. Express reads its setting when it creates its
 * router, which Nest's adapter has done in its constructor (its first middleware); the router's
 * own flag is read for every route and middleware added after that, which is all of this API's.
 * (Not an `express()` of our own handed to the adapter: `express` is the adapter's dependency, not
 * this project's, and the image has no other copy of it.)
 */
export function createHttpAdapter(): ExpressAdapter {
  const adapter = new ApiExpressAdapter();
  const server = adapter.getInstance<Express>();
  server.enable('case sensitive routing');
  (server.router as unknown as { caseSensitive: boolean }).caseSensitive = true;
  return adapter;
}

/**
 * The application as the server and the demo run it (startServer then configures and starts it):
 * AppModule on createHttpAdapter's Express, with APP_OPTIONS and how Nest's own first lines are
 * logged (`logger`, or `bufferLogs` to hold them until the app's logger takes over). The tests
 * create theirs from a testing module instead, with the same adapter and options.
 */
export function createApp(
  logging: Pick<NestApplicationOptions, 'logger' | 'bufferLogs'>,
): Promise<NestExpressApplication> {
  return NestFactory.create<NestExpressApplication>(AppModule, createHttpAdapter(), {
    ...APP_OPTIONS,
    ...logging,
  });
}

export function configureApp(app: NestExpressApplication): NestExpressApplication {
  app.disable('x-powered-by');
  // Which X-Forwarded-For to believe, so that request.ip (the key of the auth-failure limit) is the
  // client behind a load balancer rather than the balancer itself.
  app.set('trust proxy', trustProxySetting(app.get(Environment).TRUST_PROXY));
  // The API makes its own ETags (items/conditional-read.guard.ts): none of Express's body hashes.
  app.set('etag', false);
  app.set('query parser', parseQueryString);
  // gzip or br as Accept-Encoding allows, for every JSON answer (the OpenAPI document included).
  compressJsonAnswers(app.getHttpAdapter().getInstance());
  // Before Nest's router: even a request that fails routing (a malformed path) gets the headers.
  app.use(prepareRequest);
  const server = app.getHttpServer();
  // A burst's requests over their workspace's in-flight limit are refused before Express.
  app.get(InFlightOnArrival).install(server);
  // Ahead of that: every request has its log line, whatever answers it.
  logRequests(server, app.get<Logger>(ROOT_LOGGER));
  // Requests that Node's parser refuses get the envelope too (see client-error.ts).
  answerClientErrors(server);
  serveAnyExpectation(server);
  // GET /v1/openapi.json and /docs: after the headers above, before the guards (no key needed).
  const contract = buildOpenApiDocument(app);
  app.use('/v1/openapi.json', conditionalDocument(contract));
  serveApiDocs(app, contract);
  // The MCP tools' descriptions and schemas are the contract's (src/mcp).
  app.get(McpEndpoint).describe(contract);
  return app;
}

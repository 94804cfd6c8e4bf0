import { isSpanContextValid, trace } from '@opentelemetry/api';
import { randomUUID } from 'node:crypto';
import type { Request } from 'express';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { refusalOf } from './refusal-reason';
import { streamOf } from './stream-outcome';

/**
 * The request log: one JSON line per request once its response is over (method, path as received,
 * status, duration, request id, workspace), at `error` for a 5xx. A listener of the server ahead
 * of every other (app.setup.ts), so that whatever answers has its line: Express, or a refusal
 * before it (in-flight-on-arrival.ts).
 *
 * Not pino-http: per request it makes two child loggers (one serialising the whole request at once,
 * for a `req.log` that only the error filter would use) and three listeners, about a tenth of
 * the CPU of a request to /health/live (`node --cpu-prof`, docs/benchmarks.md, "The fixed cost of a
 * request"). Here a request costs one listener and, at the end, one line. The error filter logs
 * with the request's id itself (requestIdOf).
 */
export function logRequests(server: Server, logger: Logger): void {
  server.prependListener('request', (request: IncomingMessage, response: ServerResponse) =>
    logWhenClosed(logger, request, response),
  );
}

/** What the line reads of a request: Express's, or Node's for an answer made before Express. */
type LoggedRequest = IncomingMessage & Partial<Pick<Request, 'originalUrl' | 'auth'>>;

/** Writes the request's line once its response is over (or its client has gone). */
function logWhenClosed(logger: Logger, request: LoggedRequest, response: ServerResponse): void {
  const startedAt = Date.now();
  // The request's trace when tracing is on: its span is the active one while it is handled.
  const traceId = activeTraceId();
  // 'close' follows 'finish' for an answered request and also ends one the client abandoned.
  response.once('close', () => {
    const line = {
      requestId: requestIdOf(request),
      method: request.method,
      // Express's original URL, query included, as received (key-shaped values are redacted
      // from every line on its way out: log-options.ts).
      path: request.originalUrl ?? request.url,
      statusCode: response.statusCode,
      durationMs: Date.now() - startedAt,
      // The key's workspace, once the guard knows it.
      workspaceId: request.auth?.workspace.id,
      // Which limit refused it, when one did: in_flight_limit, rate_limit or overload.
      refusedBy: refusalOf(response),
      // A change stream's changes and bytes sent, and how it ended.
      stream: streamOf(response),
      traceId,
    };
    if (response.statusCode >= 500) logger.error(line, 'request errored');
    else logger.info(line, 'request completed');
  });
}

/** The id that setResponseHeaders chose and sent back as X-Request-Id: one id everywhere. */
export function requestIdOf(request: Pick<IncomingMessage, 'headers'>): string {
  const id = request.headers['x-request-id'];
  if (typeof id === 'string') return id;
  // Only a request that failed before setResponseHeaders ran has none; give it one for its lines.
  const generated = randomUUID();
  request.headers['x-request-id'] = generated;
  return generated;
}

/** The trace of the active span, if tracing is on (src/tracing) and one is active. */
function activeTraceId(): string | undefined {
  const context = trace.getActiveSpan()?.spanContext();
  return context !== undefined && isSpanContextValid(context) ? context.traceId : undefined;
}

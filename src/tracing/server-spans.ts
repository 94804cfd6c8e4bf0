import {
  type Attributes,
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Tracer,
} from '@opentelemetry/api';
import { Server, type IncomingMessage, type ServerResponse } from 'node:http';

type Emit = (this: Server, event: string | symbol, ...args: unknown[]) => boolean;

/** Probes and scrapes every few seconds would be most of the traces, and say nothing. */
const UNTRACED = /^\/(health|metrics)(\/|$|\?)/;

/**
 * The route template Express matched (`/v1/companies/:id`), for the server span's name and its
 * `http.route`; none for a request that matched no endpoint (then the route Express last matched
 * is a middleware's wildcard mount).
 */
function matchedRoute(request: IncomingMessage): string | undefined {
  const path = (request as { route?: { path?: unknown } }).route?.path;
  return typeof path === 'string' && !path.includes('*') ? path : undefined;
}

/** What the span says of the request: the method, the path and query as received, the client. */
function requestAttributes(request: IncomingMessage, url: string): Attributes {
  const query = url.indexOf('?');
  const attributes: Attributes = {
    'http.request.method': request.method,
    'url.scheme': 'http',
    'url.path': query === -1 ? url : url.slice(0, query),
    'network.protocol.version': request.httpVersion,
  };
  if (query !== -1) attributes['url.query'] = url.slice(query + 1);
  if (request.socket.remoteAddress) attributes['client.address'] = request.socket.remoteAddress;
  return attributes;
}

/**
 * A server span for each request the server receives, the probes' aside, continuing the caller's
 * W3C `traceparent`: every listener of the request (the request log, the refusals before Express,
 * Express) runs in its context, so that the statements' spans are its children. It ends when the
 * response is over (or its client has gone), named by its route, with the status.
 *
 * In place of OpenTelemetry's HTTP instrumentation on the server: with every request traced, that
 * instrumentation alone added 186 µs of CPU to a `/v1/me` on Node 24 (the target is 40), mostly
 * for what the service does not record (a dozen attributes parsed from the headers, the request's
 * and response's event emitters bound to the context so that every listener added afterwards is
 * wrapped: docs/benchmarks.md, "Tracing"). Here: one span,
 * the context entered once, the attributes that docs/operations.md names; tracing then added 74 µs
 * to a `/v1/me`, spans of its statements included (25 to 31 µs once those were the service's own
 * too: src/database/statement-spans.ts).
 */
export function traceServerRequests(tracer: Tracer): void {
  // Node's own, called below with the server as `this`.
  const emit = Reflect.get(Server.prototype, 'emit') as Emit;
  Server.prototype.emit = function (this: Server, event: string | symbol, ...args: unknown[]) {
    if (event !== 'request') return emit.call(this, event, ...args);
    const request = args[0] as IncomingMessage;
    const response = args[1] as ServerResponse;
    const url = request.url ?? '/';
    if (UNTRACED.test(url)) return emit.call(this, event, ...args);
    const parent = propagation.extract(ROOT_CONTEXT, request.headers);
    const span = tracer.startSpan(
      request.method ?? 'GET',
      { kind: SpanKind.SERVER, attributes: requestAttributes(request, url) },
      parent,
    );
    response.once('close', () => {
      const route = matchedRoute(request);
      if (route !== undefined) {
        span.setAttribute('http.route', route);
        span.updateName(`${request.method ?? 'GET'} ${route}`);
      }
      span.setAttribute('http.response.status_code', response.statusCode);
      // A server's span is in error for its own failures (5xx), not for a client's (4xx).
      if (response.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    });
    return context.with(trace.setSpan(parent, span), () => emit.call(this, event, ...args));
  };
}

import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { ApiMetrics } from './api-metrics';

/**
 * Times every request of the API's server, from its arrival to the end of its response ('finish'),
 * and records it. A listener on the server rather than an Express middleware: it sees the requests
 * that fail before or in routing too, and needs nothing from the application's pipeline. A request
 * whose connection closes before its response is finished is not recorded. Its cost, with record():
 * about 1.6 µs of CPU per request, 0.25% of the cheapest route's (docs/benchmarks.md, "Metrics").
 */
export function timeRequests(server: Server, metrics: ApiMetrics): void {
  server.prependListener('request', (request: IncomingMessage, response: ServerResponse) => {
    const started = process.hrtime.bigint();
    response.once('finish', () => {
      metrics.record(request, response, Number(process.hrtime.bigint() - started) / 1e9);
    });
  });
}

import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';
import { StartupError } from '../common/startup-error';

/** A health probe's answer: its status (200 or 503) and its JSON body. */
export interface ProbeAnswer {
  status: number;
  body: unknown;
}

/**
 * A plain node:http server of its own for Prometheus: GET /metrics, and the probes given (the
 * webhook worker's, which has no other port), nothing else. Apart from the API's server, so that
 * the proxy (which forwards PORT only) never exposes it and a scrape never goes through the API's
 * guards, limits or log.
 */
export function createMetricsServer(
  registry: Registry,
  probes: Record<string, () => Promise<ProbeAnswer>> = {},
): Server {
  return createServer((request, response) => {
    const path = request.url?.split('?', 1)[0] ?? '';
    const probe = Object.hasOwn(probes, path) ? probes[path] : undefined;
    if (path !== '/metrics' && probe === undefined) {
      response.writeHead(404, { 'Content-Type': 'text/plain' }).end('Not Found\n');
      return;
    }
    if (request.method !== 'GET') {
      response.writeHead(405, { Allow: 'GET', 'Content-Type': 'text/plain' }).end();
      return;
    }
    if (probe !== undefined) {
      void probe().then(({ status, body }) =>
        response
          .writeHead(status, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' })
          .end(JSON.stringify(body)),
      );
      return;
    }
    registry.metrics().then(
      (text) => response.writeHead(200, { 'Content-Type': registry.contentType }).end(text),
      () => response.writeHead(500, { 'Content-Type': 'text/plain' }).end('Metrics failed\n'),
    );
  });
}

/**
 * Listens on every interface, as the API does (`app.listen(PORT)`): Prometheus scrapes from
 * another host or container, which loopback would shut out. What keeps it private is that the
 * port is not the API's, which is all the proxy forwards, and that it is never published.
 */
export function listenForScrapes(server: Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      reject(
        error.code === 'EADDRINUSE'
          ? new StartupError(`METRICS_PORT ${port} is already in use: set it to a free port`)
          : error,
      );
    });
    server.listen(port, () => resolve());
  });
}

export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    // A scrape in flight takes milliseconds; an idle kept-alive one is closed at once (Node 19+).
    server.close(() => resolve());
    server.closeIdleConnections();
  });
}

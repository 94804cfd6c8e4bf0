import type { Server } from 'node:http';

export interface ServerTimeouts {
  keepAliveTimeout: number;
  headersTimeout: number;
  requestTimeout: number;
  connectionsCheckingInterval: number;
}

/*
 * - keepAliveTimeout 65 s: above the idle timeout of the load balancer in front (AWS ALB: 60 s),
 *   so that the balancer, not this server, closes an idle connection; otherwise it may send a
 *   request on a socket that this server is closing, and answer its client with a 502.
 * - headersTimeout 10 s: a client has that long to send its request line and headers (they fit in
 *   one packet), so that a slow-loris client cannot hold a socket. Since Node 18 it is counted from
 *   the first byte of each request, not from the end of the previous one, so it need not exceed
 *   keepAliveTimeout (the advice of older Node versions).
 * - requestTimeout 30 s: the whole request, body included (this API reads none).
 * - connectionsCheckingInterval 1 s: how often Node enforces the two above (default 30 s, which
 *   would let a slow client hold a socket 40 s).
 * A response's own time is bounded elsewhere: the database's connect and statement timeouts.
 */
export const SERVER_TIMEOUTS: ServerTimeouts = {
  keepAliveTimeout: 65_000,
  headersTimeout: 10_000,
  requestTimeout: 30_000,
  connectionsCheckingInterval: 1_000,
};

/** Applies the timeouts; before `listen`, which is when Node reads the checking interval. */
export function setServerTimeouts(
  server: Server,
  timeouts: ServerTimeouts = SERVER_TIMEOUTS,
): void {
  server.keepAliveTimeout = timeouts.keepAliveTimeout;
  server.headersTimeout = timeouts.headersTimeout;
  server.requestTimeout = timeouts.requestTimeout;
  // An option of createServer, which Nest calls for us; Node reads the property when the server
  // starts listening (setupConnectionsTracking in lib/_http_server.js), so setting it works.
  Object.assign(server, { connectionsCheckingInterval: timeouts.connectionsCheckingInterval });
}

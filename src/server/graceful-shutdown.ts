import { type INestApplication, Logger } from '@nestjs/common';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Draining } from '../common/draining';
import { InProgress } from '../common/in-progress';
import { stopTracing } from '../tracing/tracing';
import { handOverSignals } from './start-signals';

/** How long requests in flight may take to finish once a shutdown starts. */
const GRACE_MS = 10_000;
// Past this, exit whatever still hangs (a stuck hook): before the 30 s after which Kubernetes
// kills a container that did not stop.
const HARD_LIMIT_MS = 25_000;

export interface ShutdownOptions {
  /** How long requests in flight may take to finish. */
  graceMs?: number;
  /** Run once the application is closed, before exiting: the demo stops its database there. */
  afterClose?: () => Promise<void>;
}

/**
 * On SIGTERM (or SIGINT): stop accepting connections, let the requests in flight finish (at most
 * GRACE_MS), then close the application (Prisma's pool and every other shutdown hook), run
 * `afterClose` and exit 0.
 *
 * In place of Nest's enableShutdownHooks(), whose order is the reverse: it runs onModuleDestroy
 * (which closes the pool) before it closes the HTTP server, so requests in flight would lose their
 * database while new ones were still accepted.
 */
export function enableGracefulShutdown(
  app: INestApplication,
  { graceMs = GRACE_MS, afterClose }: ShutdownOptions = {},
): void {
  const logger = new Logger('Shutdown');
  const server = app.getHttpServer() as Server;
  // Not a Set: it kept every request it had held from dying young (common/in-progress.ts).
  const inFlight = new InProgress<ServerResponse>();
  let closing = false;

  // Ahead of Express, so that it sees every request.
  server.prependListener('request', (_request: IncomingMessage, response: ServerResponse) => {
    // A request that still arrives on a kept-alive connection is answered, then its connection
    // closed: the client goes to another instance for the next one.
    if (closing) response.setHeader('Connection', 'close');
    response.once('close', inFlight.add(response));
  });

  const shutDown = async (signal: NodeJS.Signals): Promise<void> => {
    logger.log(`${signal}: closing the HTTP server with ${inFlight.size} requests in flight`);
    closing = true;
    // Long responses (change streams) end by themselves, with their cursor, within the drain.
    app.get(Draining).begin();
    for (const response of inFlight) {
      if (!response.headersSent) response.setHeader('Connection', 'close');
    }
    if (!(await closeServer(server, graceMs))) {
      logger.warn(`Requests still in flight after ${graceMs} ms: their connections were cut`);
    }
    // Only now the pool and the other resources: no request is left to need them.
    await app.close();
    // The last requests' spans, when tracing is on (bounded by the hard limit above).
    await stopTracing();
    logger.log('Shut down');
    await afterClose?.();
  };

  // From now on the signals drain (start-signals.ts), in this tick. The drain ignores the signals
  // after the first: a Ctrl-C on `npm run` comes twice, from the terminal (to its whole group) and
  // from npm (forwarded), and the second one must not kill the process mid-drain.
  handOverSignals((signal) => {
    if (closing) return;
    setTimeout(() => process.exit(1), HARD_LIMIT_MS).unref();
    shutDown(signal).then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error(error);
        process.exit(1);
      },
    );
  });
}

/** True once every connection has ended by itself, false if some had to be cut after graceMs. */
function closeServer(server: Server, graceMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const deadline = setTimeout(() => {
      server.closeAllConnections();
      resolve(false);
    }, graceMs);
    // Stops accepting at once and closes the idle kept-alive connections (Node 19+); the busy ones
    // close after their answer (Connection: close).
    server.close(() => {
      clearTimeout(deadline);
      resolve(true);
    });
  });
}

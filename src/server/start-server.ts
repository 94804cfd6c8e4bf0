import type { NestExpressApplication } from '@nestjs/platform-express';
import { configureApp } from '../app.setup';
import { Environment } from '../config/environment';
import { Database } from '../database/database';
import { AppLogger } from '../logging/app-logger';
import { checkDatabaseAtStart } from './database-check';
import { enableGracefulShutdown, type ShutdownOptions } from './graceful-shutdown';
import { listen } from './listen';
import { setServerTimeouts } from './server-timeouts';

/**
 * Serves a created application as production does: pino logs, timeouts, graceful shutdown. Its
 * callers are server/serve.ts, the quick start (dev/demo.ts) and the benchmark's naive variant,
 * so that all three run the same server. A database without this service's tables, or a port in
 * use, stops the start with a StartupError that says what to do.
 */
export async function startServer(
  app: NestExpressApplication,
  shutdown: Pick<ShutdownOptions, 'afterClose'> = {},
): Promise<void> {
  configureApp(app);
  app.useLogger(app.get(AppLogger));
  setServerTimeouts(app.getHttpServer());
  const environment = app.get(Environment);
  await checkDatabaseAtStart(environment.DATABASE_URL);
  await app.get(Database).openConnections();
  await listen(app, environment.PORT);
  // Not enableShutdownHooks(): see graceful-shutdown.ts for the order it gets wrong. Once
  // listening, in the same turn of the event loop (no request can come in between): until then a
  // signal exits at once (start-signals.ts), as nothing is served; a drain begun before the server
  // listens would go on to listen after closing the application, and run until the hard limit.
  enableGracefulShutdown(app, shutdown);
}

import { existsSync } from 'node:fs';
import { createApp } from '../app.setup';
import { createStartLogger, type StartLogger } from '../logging/start-logger';
import { exitOnSignalUntilServing } from './start-signals';
import { startServer } from './start-server';

/**
 * The server, from the environment to serving: `node dist/main.js`, and the container's command
 * once the migrations are applied (entrypoint.ts). A failure to start is one JSON line at fatal
 * that says why (a bad variable, a busy port, a database to migrate), then exit 1.
 */
export async function serve(): Promise<void> {
  let logger: StartLogger | undefined;
  try {
    // Until the server listens and drains by itself, a signal exits at once (start-signals.ts).
    exitOnSignalUntilServing();
    if (existsSync('.env')) process.loadEnvFile('.env');
    // Nest's own messages are JSON lines like the request log from the first one: through pino
    // while the application is created, then through the LoggingModule's logger (startServer).
    logger = createStartLogger();
    await startServer(await createApp({ logger }));
  } catch (error) {
    (logger ?? createStartLogger()).failed(error);
    process.exit(1);
  }
}

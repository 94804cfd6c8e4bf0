import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { exitOnSignalUntilServing } from './start-signals';

/*
 * The container's command (`npm run start:migrate` outside one): the pending migrations, then the
 * server, in this one node process. As PID 1 it receives the SIGTERM of `docker stop` at every
 * moment, and exits 0 at once until it serves (start-signals.ts). A shell running the migrations
 * and then node would ignore SIGTERM until the server started: a replica waiting on the migration
 * lock would be killed at the stop timeout (measured with `podman stop -t 8`: 8.15 s and exit 137
 * that way, under a second and exit 0 this way).
 */
async function migrateThenServe(): Promise<void> {
  // Before anything heavier loads (the server's modules take about half a second).
  exitOnSignalUntilServing();
  if (existsSync('.env')) process.loadEnvFile('.env');
  // Before the modules it instruments load (the migrator's pg, then the server's).
  const { startTracing } = await import('../tracing/tracing.js');
  await startTracing('visitor-read-api');
  const { createStartLogger } = await import('../logging/start-logger.js');
  const logger = createStartLogger();
  try {
    // A direct connection when the service's URL leads to PgBouncer (as for `npm run db:migrate`):
    // the migrator's advisory lock is a session's, which transaction pooling would not keep.
    const { migrationDatabaseUrl } = await import('../config/environment.js');
    const databaseUrl = migrationDatabaseUrl(process.env);
    const { applyMigrations } = await import('../database/migrator.js');
    // Replicas that start together take turns on the migrator's advisory lock.
    await applyMigrations({
      databaseUrl,
      migrationsDir: join(__dirname, '..', '..', 'prisma', 'migrations'),
      log: (line) => logger.log(line, 'Migrations'),
    });
  } catch (error) {
    logger.failed(error);
    process.exit(1);
  }
  // The server's graceful shutdown takes the signals over once it serves.
  const { serve } = await import('./serve.js');
  await serve();
}

void migrateThenServe();

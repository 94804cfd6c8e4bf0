import { join } from 'node:path';
import { applyMigrations } from './migrator';

// `npm run db:migrate`: runs as dist/database/migrate.js, so the project root is two levels up.
// On DATABASE_MIGRATION_URL when set: the migrator holds a session advisory lock across its
// transactions, which a pooler in transaction mode (PgBouncer) would hand to another client's
// connection; the migrations need a direct connection to the server.
async function main(): Promise<void> {
  const databaseUrl = process.env.DATABASE_MIGRATION_URL || process.env.DATABASE_URL;
  if (!databaseUrl) throw new Error('DATABASE_MIGRATION_URL or DATABASE_URL must be set');
  await applyMigrations({
    databaseUrl,
    migrationsDir: join(__dirname, '..', '..', 'prisma', 'migrations'),
    log: (line) => console.log(line),
  });
}

main().catch((error: unknown) => {
  // The message names the migration and the cause; a stack trace would only bury it.
  console.error(error instanceof Error ? error.message : String(error));
  // exitCode rather than exit(): lets stdout and stderr flush.
  process.exitCode = 1;
});

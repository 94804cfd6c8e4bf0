import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { migrationDatabaseUrl } from '../config/environment';
import { isMissingDatabase, missingDatabase } from './database-errors';
import { applyMigrations } from './migrator';

// `npm run db:migrate`: runs as dist/database/migrate.js, so the project root is two levels up.
// On DATABASE_MIGRATION_URL when set: the migrator holds a session advisory lock across its
// transactions, which a pooler in transaction mode (PgBouncer) would hand to another client's
// connection; the migrations need a direct connection to the server.
async function main(): Promise<void> {
  const inEnvironment = new Set(Object.keys(process.env));
  if (existsSync('.env')) process.loadEnvFile('.env');
  const variable = process.env.DATABASE_MIGRATION_URL ? 'DATABASE_MIGRATION_URL' : 'DATABASE_URL';
  const source = inEnvironment.has(variable) ? 'the environment' : '.env';
  const databaseUrl = migrationDatabaseUrl(process.env);
  try {
    await applyMigrations({
      databaseUrl,
      migrationsDir: join(__dirname, '..', '..', 'prisma', 'migrations'),
      log: (line) => console.log(line),
    });
  } catch (error) {
    if (!isMissingDatabase(error)) throw error;
    throw new Error(missingDatabase(databaseUrl, { variable, source }));
  }
}

main().catch((error: unknown) => {
  // The message names the migration and the cause; a stack trace would only bury it.
  console.error(error instanceof Error ? error.message : String(error));
  // exitCode rather than exit(): lets stdout and stderr flush.
  process.exitCode = 1;
});

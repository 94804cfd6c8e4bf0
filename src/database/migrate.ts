import { join } from 'node:path';
import { applyMigrations } from './migrator';

// `npm run db:migrate`: runs as dist/database/migrate.js, so the project root is two levels up.
async function main(): Promise<void> {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) throw new Error('DATABASE_URL is not set');
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

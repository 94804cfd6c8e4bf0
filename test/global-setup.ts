import { join } from 'node:path';
import { applyMigrations } from '../src/database/migrator';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../src/dev/embedded-postgres';
import { directDatabaseUrl, withServer } from './support/database';

declare global {
  var embeddedTestDatabase: EmbeddedDatabase | undefined;
}

/**
 * Runs once per `npm test`: finds a PostgreSQL (DATABASE_URL, or an embedded one), refuses a
 * database that is not obviously a test database (the suite creates and drops databases on that
 * server), and migrates a template that every test file clones.
 */
export default async function globalSetup(): Promise<void> {
  // Once per run: the e2e and built projects share this setup, and jest calls it for each.
  if (process.env.TEST_SERVER_URL) return;
  // Far from UTC (+13:45 / +12:45), so that a date read in local time instead of UTC shows up.
  process.env.TZ = 'Pacific/Chatham';
  let url = process.env.DATABASE_URL;
  if (url) {
    const name = new URL(url).pathname.slice(1);
    if (!/test/i.test(name)) {
      throw new Error(
        `Refusing to run the tests against database "${name}": its name must contain "test".`,
      );
    }
  } else {
    globalThis.embeddedTestDatabase = await startEmbeddedPostgres('test-postgres');
    url = globalThis.embeddedTestDatabase.url;
  }
  process.env.TEST_SERVER_URL = url;
  // Through a pooler (DATABASE_URL leads to PgBouncer): the same server without it, for sessions.
  // Taken out of the environment, so that no server or admin tool a test starts migrates it.
  if (process.env.DATABASE_MIGRATION_URL) {
    process.env.TEST_DIRECT_SERVER_URL = process.env.DATABASE_MIGRATION_URL;
    delete process.env.DATABASE_MIGRATION_URL;
  }

  process.env.TEST_RUN_ID = String(process.pid);
  const template = `test_${process.pid}_template`;
  process.env.TEST_TEMPLATE_DATABASE = template;
  await withServer(async (client) => {
    await client.query(`DROP DATABASE IF EXISTS "${template}" WITH (FORCE)`);
    await client.query(`CREATE DATABASE "${template}"`);
  });
  await applyMigrations({
    databaseUrl: directDatabaseUrl(template),
    migrationsDir: join(__dirname, '..', 'prisma', 'migrations'),
  });
}

import { Logger } from '@nestjs/common';
import { Client } from 'pg';
import { notMigrated } from '../database/database-errors';
import { checkServerVersion } from '../database/server-version';
import { StartupError } from '../common/startup-error';

// The tables the server reads, all created by prisma/migrations. Any of them missing means that
// the migrations were not applied, or not all of them; every request would then fail.
const TABLES = [
  'workspaces',
  'api_keys',
  'companies',
  'contacts',
  'leads',
  'company_day_counts',
  'lead_day_counts',
  'company_filter_counts',
  'lead_filter_counts',
  'company_filter_count_deltas',
  'lead_filter_count_deltas',
  'workspace_writes',
  'workspace_write_counts',
  'company_changes',
  'lead_changes',
  'change_horizons',
];

const logger = new Logger('Database');

/**
 * Before the server listens: refuses to start on a PostgreSQL older than the supported range (and
 * warns above it: server-version.ts), or on a database that lacks this service's tables, with one
 * sentence saying what to do. Anything else (the database unreachable, slow, or refusing the
 * login) does not stop the start: the server answers 503 until the database is back, as it does
 * for an outage later on.
 */
export async function checkDatabaseAtStart(databaseUrl: string): Promise<void> {
  const client = new Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5_000 });
  let missing: string[];
  try {
    await client.connect();
    await checkServerVersion(client, (message) => logger.warn(message));
    const { rows } = await client.query<{ name: string }>(
      'SELECT name FROM unnest($1::text[]) AS name WHERE to_regclass(name) IS NULL',
      [TABLES],
    );
    missing = rows.map((row) => row.name);
  } catch (error) {
    if (error instanceof StartupError) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    logger.warn(`Could not check the database's tables at start (${reason}); starting anyway`);
    return;
  } finally {
    await client.end().catch(() => undefined);
  }
  if (missing.length === TABLES.length) throw new StartupError(notMigrated());
  if (missing.length > 0) throw new StartupError(notMigrated(missing));
}

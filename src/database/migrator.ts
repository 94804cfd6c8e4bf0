import { createHash, randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { buildConcurrently, type ConcurrentIndex, concurrentIndexOf } from './concurrent-index';
import { checkServerVersion } from './server-version';

/** Where to migrate and from which `prisma/migrations` folder. */
export interface MigrateOptions {
  databaseUrl: string;
  /** A folder in Prisma Migrate's layout: `<timestamp>_<name>/migration.sql`. */
  migrationsDir: string;
  /** Receives one line per event; silent when omitted. */
  log?: (line: string) => void;
}

// Prisma's schema engine serialises `migrate deploy` runs on this session advisory lock; taking
// the same key makes our runner and Prisma's exclude each other too.
const PRISMA_MIGRATE_LOCK_KEY = 72707369;

// Prisma's schema engine creates the table with exactly these columns (postgres flavour of
// `create_migrations_table`); IF NOT EXISTS accepts a table that Prisma created.
const CREATE_MIGRATIONS_TABLE = `
  CREATE TABLE IF NOT EXISTS _prisma_migrations (
    id                      VARCHAR(36) PRIMARY KEY NOT NULL,
    checksum                VARCHAR(64) NOT NULL,
    finished_at             TIMESTAMPTZ,
    migration_name          VARCHAR(255) NOT NULL,
    logs                    TEXT,
    rolled_back_at          TIMESTAMPTZ,
    started_at              TIMESTAMPTZ NOT NULL DEFAULT now(),
    applied_steps_count     INTEGER NOT NULL DEFAULT 0
  )`;

interface MigrationRow {
  id: string;
  checksum: string;
  finished_at: Date | null;
  migration_name: string;
  rolled_back_at: Date | null;
}

interface MigrationFile {
  name: string;
  script: string;
  checksum: string;
  /** Set for a migration that builds an index concurrently, outside a transaction. */
  concurrentIndex?: ConcurrentIndex;
}

/**
 * Applies the pending migrations of `migrationsDir`, keeping Prisma's `_prisma_migrations`
 * bookkeeping so that `prisma migrate deploy` and this runner can be used interchangeably.
 * Resolves with the names of the migrations it applied, in order.
 */
export async function applyMigrations(options: MigrateOptions): Promise<string[]> {
  const log = options.log ?? (() => undefined);
  const migrations = readMigrations(options.migrationsDir, log);
  const client = new Client({ connectionString: options.databaseUrl });
  await client.connect();
  try {
    // Before anything is written: a server below the supported range is refused here too.
    await checkServerVersion(client, log);
    await lock(client, log);
    try {
      await client.query(CREATE_MIGRATIONS_TABLE);
      const { rows } = await client.query<MigrationRow>(
        `SELECT id, checksum, finished_at, migration_name, rolled_back_at
           FROM _prisma_migrations ORDER BY started_at`,
      );
      const pending = pendingMigrations(migrations, rows, log);
      for (const migration of pending) {
        await (migration.concurrentIndex
          ? applyConcurrently(client, migration, migration.concurrentIndex, log)
          : applyOne(client, migration));
        log(`Applied migration ${migration.name}`);
      }
      if (pending.length === 0) log('No pending migrations');
      return pending.map((migration) => migration.name);
    } finally {
      // Closing the session would release the lock too; unlocking first keeps a pooled or
      // slow-to-close connection from holding it. A failure here must not hide the real error.
      await client
        .query('SELECT pg_advisory_unlock($1)', [PRISMA_MIGRATE_LOCK_KEY])
        .catch(() => {});
    }
  } finally {
    await client.end();
  }
}

// How often a run that waits for the lock asks for it again.
const LOCK_POLL_MS = 500;

async function lock(client: Client, log: (line: string) => void): Promise<void> {
  const tryLock = async () =>
    (
      await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [
        PRISMA_MIGRATE_LOCK_KEY,
      ])
    ).rows[0].locked;
  if (await tryLock()) return;
  // Unlike Prisma (10 s, then P1002) we wait as long as the other run takes: a long migration
  // of a concurrent deploy is the usual holder, and failing would only make the operator retry.
  // Asked again and again, not waited for in pg_advisory_lock(): a session blocked in that
  // statement holds a snapshot, which a CREATE INDEX CONCURRENTLY of the holder waits for while
  // the session waits for the holder, and PostgreSQL breaks that deadlock by failing one of them.
  log('Waiting for the migration lock held by another run (this runner or prisma migrate)');
  while (!(await tryLock())) await new Promise((resolve) => setTimeout(resolve, LOCK_POLL_MS));
}

function readMigrations(dir: string, log: (line: string) => void): MigrationFile[] {
  if (!existsSync(dir)) throw new Error(`Migrations directory not found: ${dir}`);
  const folders = readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    // Prisma's CLI orders the folders with localeCompare; the same order keeps both runners
    // applying pending migrations in the same sequence.
    .sort((a, b) => a.localeCompare(b));
  const migrations: MigrationFile[] = [];
  for (const name of folders) {
    const file = join(dir, name, 'migration.sql');
    if (!existsSync(file)) {
      // Prisma would fail on such a folder; a leftover empty folder is harmless, so we skip it.
      log(`Skipping ${name}: it has no migration.sql`);
      continue;
    }
    const bytes = readFileSync(file);
    const script = decodeUtf8(bytes, name);
    migrations.push({
      name,
      script,
      checksum: sha256Hex(bytes),
      concurrentIndex: concurrentIndexOf(name, script),
    });
  }
  return migrations;
}

// Prisma hashes the UTF-8 text of migration.sql, which equals the file bytes for any valid UTF-8
// file. An invalid file is refused instead of being sent to PostgreSQL with replacement characters.
function decodeUtf8(bytes: Buffer, name: string): string {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw new Error(`Migration ${name}: migration.sql is not valid UTF-8`);
  }
}

function pendingMigrations(
  migrations: MigrationFile[],
  rows: MigrationRow[],
  log: (line: string) => void,
): MigrationFile[] {
  // A started migration that never finished is a failed one (Prisma's P3009): its SQL may be
  // half applied, so only the operator can tell what to do.
  const failed = rows.find((row) => row.finished_at === null && row.rolled_back_at === null);
  if (failed) {
    throw new Error(
      `Migration ${failed.migration_name} failed in an earlier run and is not marked as rolled ` +
        'back. Fix the database by hand, then mark it rolled back (`prisma migrate resolve ' +
        `--rolled-back ${failed.migration_name}\`, or UPDATE _prisma_migrations SET ` +
        `rolled_back_at = now() WHERE id = '${failed.id}') and run the migrations again.`,
    );
  }
  // As in Prisma, rows marked rolled back do not count: such a migration is applied again.
  const applied = new Map(
    rows.filter((row) => row.rolled_back_at === null).map((row) => [row.migration_name, row]),
  );
  const names = new Set(migrations.map((migration) => migration.name));
  for (const name of applied.keys()) {
    // `migrate deploy` ignores these and `migrate status` reports them. Refusing would block
    // every deploy of an older build (a rollback of the code) against a newer database.
    if (!names.has(name))
      log(`Warning: migration ${name} is applied but missing from the migrations folder`);
  }
  // Prisma's `migrate deploy` does not check these, `migrate dev` does; we refuse an edited
  // migration before applying anything, since the database no longer matches the folder.
  for (const migration of migrations) {
    const row = applied.get(migration.name);
    if (row && !matchesChecksum(migration.script, row.checksum)) {
      throw new Error(
        `Migration ${migration.name} was modified after it was applied: its checksum no longer ` +
          'matches the one recorded in _prisma_migrations. Restore the original file and put ' +
          'the change in a new migration.',
      );
    }
  }
  return migrations.filter((migration) => !applied.has(migration.name));
}

async function applyOne(client: Client, migration: MigrationFile): Promise<void> {
  const id = randomUUID();
  // One transaction for the row and the SQL: a failure rolls everything back and leaves no row,
  // where Prisma would keep a failed row that blocks later runs until someone resolves it. With
  // nothing applied there is nothing to resolve: fix the file and run again.
  await client.query('BEGIN');
  try {
    await client.query(
      'INSERT INTO _prisma_migrations (id, checksum, migration_name, started_at) VALUES ($1, $2, $3, now())',
      [id, migration.checksum, migration.name],
    );
    try {
      // Without parameters pg uses the simple query protocol, which runs several statements.
      await client.query(migration.script);
    } catch (error) {
      throw new Error(`Migration ${migration.name} failed: ${errorMessage(error)}`);
    }
    // clock_timestamp(): now() would still be the transaction's start, i.e. started_at.
    await client.query(
      `UPDATE _prisma_migrations SET finished_at = clock_timestamp(), applied_steps_count = 1
        WHERE id = $1`,
      [id],
    );
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  }
}

/**
 * A migration that builds an index concurrently (concurrent-index.ts): its statement outside a
 * transaction, then its row, written only once the index is built, so that a run stopped during
 * the build leaves no row and the next one resumes it.
 */
async function applyConcurrently(
  client: Client,
  migration: MigrationFile,
  index: ConcurrentIndex,
  log: (line: string) => void,
): Promise<void> {
  // The server's clock, as for finished_at.
  const { rows } = await client.query<{ now: Date }>('SELECT clock_timestamp() AS now');
  try {
    await buildConcurrently(client, index, migration.script, log);
  } catch (error) {
    throw new Error(`Migration ${migration.name} failed: ${errorMessage(error)}`);
  }
  await client.query(
    `INSERT INTO _prisma_migrations
       (id, checksum, migration_name, started_at, finished_at, applied_steps_count)
     VALUES ($1, $2, $3, $4, clock_timestamp(), 1)`,
    [randomUUID(), migration.checksum, migration.name, rows[0].now],
  );
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function sha256Hex(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

// Prisma's `script_matches_checksum`: a file checked out with other line endings (git on
// Windows) still matches, and so do the non-zero-padded checksums older Prisma versions wrote.
function matchesChecksum(script: string, recorded: string): boolean {
  const variants = [script, script.replaceAll('\r\n', '\n'), script.replaceAll('\n', '\r\n')];
  return variants.some((variant) => {
    const digest = createHash('sha256').update(variant, 'utf8').digest();
    const hex =
      recorded.length === 64 || recorded === ''
        ? digest.toString('hex')
        : Array.from(digest, (byte) => byte.toString(16)).join('');
    return hex === recorded;
  });
}

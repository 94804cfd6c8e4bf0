import type { Client } from 'pg';

/*
 * A migration that builds an index with CREATE INDEX CONCURRENTLY, which PostgreSQL refuses to run
 * in a transaction block: the build takes only a SHARE UPDATE EXCLUSIVE lock, so the table is read
 * and written throughout, where a plain CREATE INDEX blocks its writes for the whole build.
 *
 * Such a migration is exactly one `CREATE INDEX CONCURRENTLY IF NOT EXISTS <name> ...` statement,
 * for the same reason as in Prisma: `prisma migrate deploy` sends a migration's file as one query,
 * and PostgreSQL runs a query of several statements as one transaction, where the build fails.
 * Being one statement, it is applied whole or not at all, as the other migrations are:
 * - A failed build leaves the index behind, INVALID (never used by queries, but written by every
 *   insert and update): the runner drops it before reporting the failure.
 * - A build cut off (the server restarted, the session killed) leaves it INVALID too, and no row
 *   in `_prisma_migrations`, which is written only once the build is done: the next run drops the
 *   invalid index and builds it again. `IF NOT EXISTS` makes that run record an index whose build
 *   had ended before its runner stopped, without building it twice.
 */

/**
 * The index of a concurrent-index migration, as the statement names it (quoted or not), and
 * whether it is dropped (`DROP INDEX CONCURRENTLY IF EXISTS <name>`: an index that another made
 * redundant goes without blocking reads; a drop cut off leaves it INVALID, and the next run drops
 * it again) rather than built.
 */
export interface ConcurrentIndex {
  name: string;
  drop?: boolean;
}

const CONCURRENT_INDEX =
  /^CREATE\s+(?:UNIQUE\s+)?INDEX\s+CONCURRENTLY\s+IF\s+NOT\s+EXISTS\s+("(?:[^"]|"")+"|[A-Za-z_][\w$]*)\s+ON\s[^;]*;?$/i;
const CONCURRENT_DROP =
  /^DROP\s+INDEX\s+CONCURRENTLY\s+IF\s+EXISTS\s+("(?:[^"]|"")+"|[A-Za-z_][\w$]*)\s*;?$/i;

/**
 * The index a migration builds concurrently, or undefined for a migration that runs in a
 * transaction. Throws for a file that uses CONCURRENTLY in any other way, before anything is
 * applied: with another statement, it would fail in PostgreSQL's transaction; without a name or
 * `IF NOT EXISTS`, an interrupted build could not be resumed.
 */
export function concurrentIndexOf(name: string, script: string): ConcurrentIndex | undefined {
  const statements = withoutComments(script).trim();
  if (!/\bCONCURRENTLY\b/i.test(statements)) return undefined;
  const drop = CONCURRENT_DROP.exec(statements);
  if (drop) return { name: drop[1], drop: true };
  const match = CONCURRENT_INDEX.exec(statements);
  if (!match) {
    throw new Error(
      `Migration ${name}: a migration that uses CONCURRENTLY must be exactly one statement, ` +
        '`CREATE INDEX CONCURRENTLY IF NOT EXISTS <name> ON ...` or `DROP INDEX CONCURRENTLY IF ' +
        'EXISTS <name>`: PostgreSQL runs it only outside a transaction, and an interrupted build ' +
        'is resumed by name.',
    );
  }
  return { name: match[1] };
}

// SQL comments, `--` to the end of the line and `/* */`: migration files start with some.
function withoutComments(script: string): string {
  return script.replace(/\/\*[\s\S]*?\*\//g, ' ').replace(/--[^\n]*/g, ' ');
}

/**
 * Runs the migration's one statement outside a transaction. An index of its name left INVALID
 * by an earlier build is dropped first; one left by this build's failure, before rethrowing.
 */
export async function buildConcurrently(
  client: Client,
  index: ConcurrentIndex,
  script: string,
  log: (line: string) => void,
): Promise<void> {
  if (index.drop) {
    await client.query(script);
    return;
  }
  if (await dropIfInvalid(client, index)) {
    log(`Dropped the invalid index ${index.name} that an interrupted build had left`);
  }
  try {
    await client.query(script);
  } catch (error) {
    // A failure to drop must not hide the build's own error; the next run drops it then.
    await dropIfInvalid(client, index).catch(() => false);
    throw error;
  }
}

async function dropIfInvalid(client: Client, index: ConcurrentIndex): Promise<boolean> {
  const { rows } = await client.query<{ valid: boolean }>(
    'SELECT indisvalid AS valid FROM pg_index WHERE indexrelid = to_regclass($1)',
    [index.name],
  );
  if (rows.length === 0 || rows[0].valid) return false;
  // CONCURRENTLY too: a plain DROP INDEX would lock the table against reads while it waits.
  await client.query(`DROP INDEX CONCURRENTLY IF EXISTS ${index.name}`);
  return true;
}

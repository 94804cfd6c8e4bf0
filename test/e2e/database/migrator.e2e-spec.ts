import { createHash, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { createTestDatabase, type TestDatabase } from '../../support/database';
import { until } from '../../support/until';
import { applyMigrations } from '../../../src/database/migrator';

const FIRST = '20260101000000_first';
const SECOND = '20260102000000_second';
const THIRD = '20260103000000_third';

// Verbatim from Prisma's schema engine (postgres `create_migrations_table`).
const PRISMA_DDL = `
CREATE TABLE _prisma_migrations (
    id                      VARCHAR(36) PRIMARY KEY NOT NULL,
    checksum                VARCHAR(64) NOT NULL,
    finished_at             TIMESTAMPTZ,
    migration_name          VARCHAR(255) NOT NULL,
    logs                    TEXT,
    rolled_back_at          TIMESTAMPTZ,
    started_at              TIMESTAMPTZ NOT NULL DEFAULT now(),
    applied_steps_count     INTEGER NOT NULL DEFAULT 0
);`;

let db: TestDatabase;
let dir: string;

beforeEach(async () => {
  db = await createTestDatabase({ migrated: false });
  dir = mkdtempSync(join(tmpdir(), 'migrator-'));
});

afterEach(async () => {
  rmSync(dir, { recursive: true, force: true });
  await db.drop();
});

function write(name: string, sql: string): void {
  mkdirSync(join(dir, name), { recursive: true });
  writeFileSync(join(dir, name, 'migration.sql'), sql);
}

function checksumOf(name: string): string {
  return createHash('sha256')
    .update(readFileSync(join(dir, name, 'migration.sql')))
    .digest('hex');
}

function migrate(log?: (line: string) => void): Promise<string[]> {
  return applyMigrations({ databaseUrl: db.directUrl, migrationsDir: dir, log });
}

async function query<T extends object>(sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new Client({ connectionString: db.directUrl });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

async function tableExists(name: string): Promise<boolean> {
  const rows = await query<{ found: string | null }>('SELECT to_regclass($1)::text AS found', [
    name,
  ]);
  return rows[0].found !== null;
}

async function migrationNames(): Promise<string[]> {
  const rows = await query<{ migration_name: string }>(
    'SELECT migration_name FROM _prisma_migrations ORDER BY migration_name',
  );
  return rows.map((row) => row.migration_name);
}

describe('applyMigrations', () => {
  it('applies pending migrations in name order and records them as Prisma does', async () => {
    // Written in reverse order, with the files Prisma keeps beside the folders.
    write(SECOND, 'CREATE TABLE b (a_id INT NOT NULL REFERENCES a (id));\n');
    write(
      FIRST,
      '-- CreateTable\nCREATE TABLE a (id INT PRIMARY KEY);\nINSERT INTO a VALUES (1);\n',
    );
    writeFileSync(join(dir, 'migration_lock.toml'), 'provider = "postgresql"\n');
    const lines: string[] = [];

    await expect(migrate((line) => lines.push(line))).resolves.toEqual([FIRST, SECOND]);

    expect(lines).toEqual([`Applied migration ${FIRST}`, `Applied migration ${SECOND}`]);
    const rows = await query<Record<string, unknown>>(
      'SELECT * FROM _prisma_migrations ORDER BY started_at',
    );
    expect(rows).toEqual(
      [FIRST, SECOND].map((name) => ({
        id: expect.stringMatching(
          /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
        ),
        checksum: checksumOf(name),
        finished_at: expect.any(Date),
        migration_name: name,
        logs: null,
        rolled_back_at: null,
        started_at: expect.any(Date),
        applied_steps_count: 1,
      })),
    );
    for (const row of rows) {
      expect((row.finished_at as Date).getTime()).toBeGreaterThanOrEqual(
        (row.started_at as Date).getTime(),
      );
    }
    expect(await query('SELECT id FROM a')).toEqual([{ id: 1 }]);
  });

  it('creates _prisma_migrations with the columns of Prisma', async () => {
    await migrate();
    const columnsSql = `
      SELECT column_name, data_type, character_maximum_length, is_nullable, column_default
        FROM information_schema.columns
       WHERE table_schema = 'public' AND table_name = '_prisma_migrations'
       ORDER BY ordinal_position`;
    const ours = await query(columnsSql);

    await query('DROP TABLE _prisma_migrations');
    await query(PRISMA_DDL);

    expect(ours).toHaveLength(8);
    expect(ours).toEqual(await query(columnsSql));
  });

  it('applies nothing the second time', async () => {
    write(FIRST, 'CREATE TABLE a (id INT);\n');
    await migrate();
    const lines: string[] = [];

    await expect(migrate((line) => lines.push(line))).resolves.toEqual([]);

    expect(lines).toEqual(['No pending migrations']);
    expect(await migrationNames()).toEqual([FIRST]);
  });

  it('refuses an applied migration whose file changed, before applying anything', async () => {
    write(FIRST, 'CREATE TABLE a (id INT);\n');
    await migrate();
    write(FIRST, 'CREATE TABLE a (id BIGINT);\n');
    write(SECOND, 'CREATE TABLE b (id INT);\n');

    await expect(migrate()).rejects.toThrow(new RegExp(`${FIRST} was modified`));

    expect(await tableExists('b')).toBe(false);
    expect(await migrationNames()).toEqual([FIRST]);
  });

  it('rolls a failing migration back entirely and names it', async () => {
    write(FIRST, 'CREATE TABLE a (id INT);\n');
    write(SECOND, 'CREATE TABLE partial (id INT);\nSELECT no_such_function();\n');
    write(THIRD, 'CREATE TABLE c (id INT);\n');

    const error = migrate();
    await expect(error).rejects.toThrow(`Migration ${SECOND} failed:`);
    await expect(error).rejects.toThrow('function no_such_function() does not exist');

    expect(await tableExists('a')).toBe(true);
    expect(await tableExists('partial')).toBe(false);
    expect(await tableExists('c')).toBe(false);
    expect(await migrationNames()).toEqual([FIRST]);

    // No failed row was left behind: once the file is fixed, the next run carries on.
    write(SECOND, 'CREATE TABLE partial (id INT);\n');
    await expect(migrate()).resolves.toEqual([SECOND, THIRD]);
  });

  it('refuses to run after a failed migration until it is marked rolled back', async () => {
    write(FIRST, 'CREATE TABLE a (id INT);\n');
    write(SECOND, 'CREATE TABLE b (id INT);\n');
    await migrate();
    // What Prisma leaves after a failure: started, not finished, not rolled back.
    const id = randomUUID();
    await query(
      `INSERT INTO _prisma_migrations (id, checksum, migration_name, started_at, logs)
       VALUES ($1, $2, $3, now(), 'error')`,
      [id, 'x'.repeat(64), THIRD],
    );
    write(THIRD, 'CREATE TABLE c (id INT);\n');

    await expect(migrate()).rejects.toThrow(
      new RegExp(`Migration ${THIRD} failed in an earlier run .*rolled-back ${THIRD}`),
    );
    expect(await tableExists('c')).toBe(false);

    // Marked rolled back, it is pending again, as in Prisma.
    await query('UPDATE _prisma_migrations SET rolled_back_at = now() WHERE id = $1', [id]);
    await expect(migrate()).resolves.toEqual([THIRD]);
    expect(await tableExists('c')).toBe(true);
  });

  it('warns about, and tolerates, an applied migration missing from the folder', async () => {
    write(FIRST, 'CREATE TABLE a (id INT);\n');
    write(SECOND, 'CREATE TABLE b (id INT);\n');
    await migrate();
    rmSync(join(dir, SECOND), { recursive: true });
    const lines: string[] = [];

    await expect(migrate((line) => lines.push(line))).resolves.toEqual([]);

    expect(lines).toContainEqual(expect.stringContaining(`Warning: migration ${SECOND}`));
  });

  it('accepts the table and rows written by prisma migrate deploy', async () => {
    write(FIRST, 'CREATE TABLE a (id INT);\n');
    // Checked out with CRLF line endings, applied by Prisma from an LF checkout.
    write(SECOND, 'CREATE TABLE b (id INT);\r\nCREATE TABLE b2 (id INT);\r\n');
    write(THIRD, 'CREATE TABLE c (id INT);\n');
    const lfChecksum = createHash('sha256')
      .update('CREATE TABLE b (id INT);\nCREATE TABLE b2 (id INT);\n')
      .digest('hex');
    await query(PRISMA_DDL);
    await query('CREATE TABLE a (id INT); CREATE TABLE b (id INT); CREATE TABLE b2 (id INT)');
    // The statements of Prisma's record_migration_started, record_successful_step and
    // record_migration_finished.
    for (const [name, checksum] of [
      [FIRST, checksumOf(FIRST)],
      [SECOND, lfChecksum],
    ]) {
      const id = randomUUID();
      await query(
        'INSERT INTO _prisma_migrations (id, checksum, started_at, migration_name) VALUES ($1, $2, now(), $3)',
        [id, checksum, name],
      );
      await query(
        'UPDATE _prisma_migrations SET applied_steps_count = applied_steps_count + 1 WHERE id = $1',
        [id],
      );
      await query('UPDATE _prisma_migrations SET finished_at = now() WHERE id = $1', [id]);
    }

    await expect(migrate()).resolves.toEqual([THIRD]);
    expect(await tableExists('c')).toBe(true);
  });

  it('waits for the lock of Prisma and applies each migration once when runs overlap', async () => {
    write(FIRST, 'CREATE TABLE counter (n INT);\n');
    write(SECOND, 'INSERT INTO counter VALUES (1);\n');
    // Hold the lock as a running `prisma migrate deploy` would.
    const prisma = new Client({ connectionString: db.directUrl });
    await prisma.connect();
    try {
      await prisma.query('SELECT pg_advisory_lock(72707369)');
      let waiting = 0;
      let bothWaiting!: () => void;
      const blocked = new Promise<void>((resolve) => (bothWaiting = resolve));
      const onLog = (line: string): void => {
        if (line.startsWith('Waiting for the migration lock') && ++waiting === 2) bothWaiting();
      };
      const runs = Promise.all([migrate(onLog), migrate(onLog)]);

      await blocked;
      await prisma.query('SELECT pg_advisory_unlock(72707369)');
      const [one, two] = await runs;

      expect([...one, ...two].sort()).toEqual([FIRST, SECOND]);
      expect(await query('SELECT n FROM counter')).toEqual([{ n: 1 }]);
      expect(await migrationNames()).toEqual([FIRST, SECOND]);
    } finally {
      await prisma.end();
    }
  });

  describe('a migration that builds an index concurrently', () => {
    const INDEX = '20260102000000_index';
    const BUILD = 'CREATE INDEX CONCURRENTLY IF NOT EXISTS t_v_idx ON t (v);\n';

    async function index(name = 't_v_idx'): Promise<{ valid: boolean; oid: number } | undefined> {
      const rows = await query<{ valid: boolean; oid: number }>(
        'SELECT indisvalid AS valid, indexrelid::int AS oid FROM pg_index WHERE indexrelid = to_regclass($1)',
        [name],
      );
      return rows[0];
    }

    /** A session of the test's own, for holding a transaction open beside a run. */
    async function session(): Promise<Client> {
      const client = new Client({ connectionString: db.directUrl });
      await client.connect();
      return client;
    }

    /** Until a run's statement that contains `text` waits for a lock. */
    const waiting = (text: string) =>
      until(`a statement with ${text} waiting for a lock`, async () => {
        const rows = await query(
          `SELECT 1 FROM pg_stat_activity
            WHERE query LIKE $1 AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`,
          [`%${text}%`],
        );
        return rows.length > 0;
      });

    beforeEach(() => {
      write(
        FIRST,
        '-- The table.\nCREATE TABLE t (id INT, v INT);\nINSERT INTO t VALUES (1, 1);\n',
      );
    });

    it('builds it outside a transaction and records it as Prisma does', async () => {
      write(INDEX, `-- Comments before it are fine.\n${BUILD}`);

      await expect(migrate()).resolves.toEqual([FIRST, INDEX]);

      expect(await index()).toMatchObject({ valid: true });
      const rows = await query<Record<string, unknown>>(
        'SELECT * FROM _prisma_migrations WHERE migration_name = $1',
        [INDEX],
      );
      expect(rows).toEqual([
        expect.objectContaining({
          checksum: checksumOf(INDEX),
          finished_at: expect.any(Date),
          rolled_back_at: null,
          applied_steps_count: 1,
        }),
      ]);
      expect((rows[0].finished_at as Date).getTime()).toBeGreaterThanOrEqual(
        (rows[0].started_at as Date).getTime(),
      );
    });

    it('lets other sessions write to the table while the build waits', async () => {
      await migrate();
      write(INDEX, BUILD);
      // A writer's transaction still open: the build waits for it to end before it starts.
      const writer = await session();
      const other = await session();
      try {
        await writer.query('BEGIN');
        await writer.query('INSERT INTO t VALUES (2, 2)');
        const run = migrate();
        await waiting('CREATE INDEX');

        // A plain CREATE INDEX would now queue for its SHARE lock, and every write behind it.
        await other.query("SET lock_timeout = '2s'");
        await other.query('INSERT INTO t VALUES (3, 3)');
        expect(await other.query('SELECT count(*)::int AS n FROM t')).toMatchObject({
          rows: [{ n: 2 }],
        });

        await writer.query('COMMIT');
        await expect(run).resolves.toEqual([INDEX]);
        expect(await index()).toMatchObject({ valid: true });
      } finally {
        await writer.end();
        await other.end();
      }
    });

    it('drops the invalid index of a failed build and records nothing; fixed, it applies', async () => {
      write(FIRST, 'CREATE TABLE t (id INT, v INT);\nINSERT INTO t VALUES (1, 1), (2, 1);\n');
      write(INDEX, 'CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS t_v_idx ON t (v);\n');

      await expect(migrate()).rejects.toThrow(`Migration ${INDEX} failed: could not create unique`);

      expect(await index()).toBeUndefined();
      expect(await migrationNames()).toEqual([FIRST]);
      await query('DELETE FROM t WHERE id = 2');
      await expect(migrate()).resolves.toEqual([INDEX]);
      expect(await index()).toMatchObject({ valid: true });
    });

    it('builds again an index that an interrupted build left invalid', async () => {
      await migrate();
      // What a build cut off leaves: the index, INVALID, and no row (made here by a failed build).
      await query('INSERT INTO t VALUES (2, 1)');
      await expect(query('CREATE UNIQUE INDEX CONCURRENTLY t_v_idx ON t (v)')).rejects.toThrow();
      expect(await index()).toMatchObject({ valid: false });
      write(INDEX, BUILD);
      const lines: string[] = [];

      await expect(migrate((line) => lines.push(line))).resolves.toEqual([INDEX]);

      expect(lines).toContain(
        'Dropped the invalid index t_v_idx that an interrupted build had left',
      );
      expect(await index()).toMatchObject({ valid: true });
    });

    it('records an index whose build ended after its run stopped, without building it again', async () => {
      await migrate();
      await query('CREATE INDEX t_v_idx ON t (v)');
      const built = await index();
      write(INDEX, BUILD);

      await expect(migrate()).resolves.toEqual([INDEX]);

      expect(await index()).toEqual(built);
    });

    it('drops an index concurrently: reads of the table go on while the drop waits', async () => {
      write(INDEX, BUILD);
      await migrate();
      const DROP = '20260103000000_drop';
      write(DROP, '-- Made redundant.\nDROP INDEX CONCURRENTLY IF EXISTS t_v_idx;\n');
      const reader = await session();
      const other = await session();
      try {
        // A reader's transaction holds the table: the drop waits for it.
        await reader.query('BEGIN');
        await reader.query('SELECT count(*) FROM t');
        const run = migrate();
        await waiting('DROP INDEX');

        // A plain DROP INDEX would hold an ACCESS EXCLUSIVE lock request, and reads behind it.
        await other.query("SET lock_timeout = '2s'");
        expect(await other.query('SELECT count(*)::int AS n FROM t')).toMatchObject({
          rows: [{ n: 1 }],
        });

        await reader.query('COMMIT');
        await expect(run).resolves.toEqual([DROP]);
        expect(await index()).toBeUndefined();
        // Applied again on a database where the index is already gone: IF EXISTS.
        await query('DELETE FROM _prisma_migrations WHERE migration_name = $1', [DROP]);
        await expect(migrate()).resolves.toEqual([DROP]);
      } finally {
        await reader.end();
        await other.end();
      }
    });

    it.each([
      ['with another statement', `${BUILD}CREATE TABLE u (id INT);\n`],
      ['without IF NOT EXISTS', 'CREATE INDEX CONCURRENTLY t_v_idx ON t (v);\n'],
      ['without a name', 'CREATE INDEX CONCURRENTLY ON t (v);\n'],
      ['a drop without IF EXISTS', 'DROP INDEX CONCURRENTLY t_v_idx;\n'],
      ['in a transaction of its own', `BEGIN;\n${BUILD}COMMIT;\n`],
    ])('refuses CONCURRENTLY %s, before applying anything', async (_, script) => {
      write(INDEX, script);

      await expect(migrate()).rejects.toThrow(
        `Migration ${INDEX}: a migration that uses CONCURRENTLY must be exactly one statement`,
      );

      expect(await tableExists('t')).toBe(false);
    });

    it('lets another run wait for the lock without deadlocking with the build', async () => {
      await migrate();
      write(INDEX, BUILD);
      write(THIRD, 'CREATE TABLE c (id INT);\n');
      const writer = await session();
      try {
        await writer.query('BEGIN');
        await writer.query('INSERT INTO t VALUES (2, 2)');
        let secondWaits!: () => void;
        const secondWaiting = new Promise<void>((resolve) => (secondWaits = resolve));
        const first = migrate();
        await waiting('CREATE INDEX');
        const second = migrate((line) => {
          if (line.startsWith('Waiting for the migration lock')) secondWaits();
        });
        await secondWaiting;

        // The build then waits for every older snapshot: a run blocked in pg_advisory_lock()
        // would hold one while waiting for the build, and PostgreSQL would fail one of the two.
        await writer.query('COMMIT');

        const [one, two] = await Promise.all([first, second]);
        expect([...one, ...two]).toEqual([INDEX, THIRD]);
        expect(await index()).toMatchObject({ valid: true });
      } finally {
        await writer.end();
      }
    });
  });

  it("applies the project's own migrations to an empty database", async () => {
    const projectDir = join(__dirname, '../../..', 'prisma', 'migrations');
    const folders = readdirSync(projectDir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
      .sort();

    await expect(
      applyMigrations({ databaseUrl: db.directUrl, migrationsDir: projectDir }),
    ).resolves.toEqual(folders);

    for (const table of ['workspaces', 'api_keys', 'companies', 'contacts', 'leads']) {
      expect(await tableExists(table)).toBe(true);
    }
  });
});

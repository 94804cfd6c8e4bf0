import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { type AdminRun, runAdminCommand } from '../../support/admin';
import { createTestDatabase, type TestDatabase, waitForLockWaiter } from '../../support/database';
import { companyRecord, contactRecord, leadRecord } from '../../support/factories';

/*
 * What the database refuses of an import that passed every check of its own (issue 13, point 2):
 * each refusal named by record and field, nothing written. Provoked as they can happen: the
 * database's schema differing from the field maps, or another writer changing the workspace
 * while the import runs (held here between the import's checks and its writes by a table lock).
 * src/import/import-refusals.spec.ts maps every other code.
 */

let database: TestDatabase;
let client: Client;
let directory: string;

beforeEach(async () => {
  database = await createTestDatabase();
  client = new Client({ connectionString: database.url });
  await client.connect();
  await client.query(
    `INSERT INTO workspaces (id, name, plan, updated_at) VALUES
      ('ws_mine', 'Mine', 'growth', now()), ('ws_other', 'Other', 'growth', now())`,
  );
  directory = await mkdtemp(join(tmpdir(), 'import-refusals-'));
});

afterEach(async () => {
  await client?.end();
  await database?.drop();
  await rm(directory, { recursive: true, force: true });
});

async function importFile(content: unknown): Promise<AdminRun> {
  const path = join(directory, 'import.json');
  await writeFile(path, JSON.stringify(content));
  return runAdminCommand(
    { DATABASE_URL: database.url },
    'import',
    '--workspace',
    'ws_mine',
    '--file',
    path,
  );
}

async function rows(table: string): Promise<number> {
  const {
    rows: [row],
  } = await client.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM ${table} WHERE workspace_id = 'ws_mine'`,
  );
  return row.n;
}

it('a CHECK constraint narrower than the field map (23514): the record and the field', async () => {
  await client.query(`ALTER TABLE companies DROP CONSTRAINT companies_name_length,
    ADD CONSTRAINT companies_name_length CHECK (char_length(name) <= 12)`);

  const run = await importFile({
    companies: [
      companyRecord({ id: 'co_1', name: 'Short' }),
      companyRecord({ id: 'co_2', name: 'A name of 23 characters' }),
    ],
  });

  expect(run).toStrictEqual({
    status: 1,
    stdout: '',
    stderr:
      'error: import refused, nothing was written: 1 record is invalid\n' +
      '  companies[1] (id co_2): name is longer than the database allows (it has 23): refused by its constraint companies_name_length\n',
  });
  expect(await rows('companies')).toBe(0);
});

it('a column narrower than the field map (22001, string too long): the record and the field', async () => {
  await client.query('ALTER TABLE contacts ALTER COLUMN job_title TYPE varchar(5)');

  const run = await importFile({
    companies: [
      companyRecord({
        id: 'co_1',
        contacts: [contactRecord({ id: 'ct_1', jobTitle: 'CTO' }), contactRecord({ id: 'ct_2' })],
      }),
    ],
  });

  expect(run.stderr).toBe(
    'error: import refused, nothing was written: 1 record is invalid\n' +
      "  companies[0].contacts[1] (id ct_2): jobTitle is longer than the database's column allows: 14 characters, at most 5\n",
  );
  expect(await rows('companies')).toBe(0);
});

/**
 * Runs the import while the test holds `table` locked (so the import waits between its checks and
 * its write to that table), does `meanwhile` in the lock's transaction, then lets the import go.
 */
async function importWhile(
  table: string,
  content: unknown,
  meanwhile: (db: Client) => Promise<unknown>,
) {
  const writer = new Client({ connectionString: database.url });
  await writer.connect();
  try {
    await writer.query('BEGIN');
    await writer.query(`LOCK TABLE ${table} IN SHARE ROW EXCLUSIVE MODE`);
    const run = importFile(content);
    await waitForLockWaiter(client);
    await meanwhile(writer);
    await writer.query('COMMIT');
    return await run;
  } finally {
    await writer.end();
  }
}

it('an id another workspace took during the import (the upsert leaves it alone): the record', async () => {
  const run = await importWhile(
    'contacts',
    {
      companies: [
        companyRecord({
          id: 'co_1',
          contacts: [contactRecord({ id: 'ct_1' }), contactRecord({ id: 'ct_taken' })],
        }),
      ],
    },
    async (writer) => {
      await writer.query(`INSERT INTO companies VALUES ('co_theirs', 'ws_other', 'Theirs', 'd', 'i',
        's', 'c', 'c', 'r', NULL, 1, 'hot', 1, 1, 'new', 1, now(), now())`);
      await writer.query(`INSERT INTO contacts (id, workspace_id, company_id, name, job_title, seniority)
        VALUES ('ct_taken', 'ws_other', 'co_theirs', 'Theirs', 'Theirs', 'ic')`);
    },
  );

  expect(run.stderr).toBe(
    'error: import refused, nothing was written: 1 record is invalid\n' +
      '  companies[0].contacts[1] (id ct_taken): id ct_taken is already used by another workspace (written during the import)\n',
  );
  expect(await rows('companies')).toBe(0);
});

it('a company deleted during the import (23503, foreign key): the leads that point to it', async () => {
  // Seen on another day than the file's company: the two transactions then share no count row
  // (migration 20261123000000_list_totals), where they would deadlock.
  const stored = companyRecord({
    id: 'co_stored',
    name: 'Stored',
    firstSeen: '2026-01-01T00:00:00.000Z',
    lastSeen: '2026-01-02T00:00:00.000Z',
  });
  await importFile({ companies: [stored] });
  const fresh = companyRecord({ id: 'co_new' });

  const run = await importWhile(
    'leads',
    {
      companies: [fresh],
      leads: [leadRecord(fresh, { id: 'ld_1' }), leadRecord(stored, { id: 'ld_2' })],
    },
    (writer) => writer.query("DELETE FROM companies WHERE id = 'co_stored'"),
  );

  expect(run.stderr).toBe(
    'error: import refused, nothing was written: 1 record is invalid\n' +
      "  leads[1] (id ld_2): companyId co_stored is no longer a company of the workspace (deleted during the import?): refused by the database's leads_company_id_workspace_id_fkey\n",
  );
  expect(await rows('companies')).toBe(0);
});

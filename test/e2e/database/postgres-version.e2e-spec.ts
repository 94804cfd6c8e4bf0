import { Logger } from '@nestjs/common';
import { join } from 'node:path';
import { Client } from 'pg';
import { StartupError } from '../../../src/common/startup-error';
import { applyMigrations } from '../../../src/database/migrator';
import { judgeServerVersion } from '../../../src/database/server-version';
import { checkDatabaseAtStart } from '../../../src/server/database-check';
import { createTestDatabase, type TestDatabase } from '../../support/database';
import { type FakePostgres, startFakePostgres } from '../../support/fake-postgres';

/*
 * The supported PostgreSQL range at start (src/database/server-version.ts): the run's own server
 * is within it, a server below it is refused before anything is written, one above it is
 * started with a warning. Versions no machine here has are played by a stand-in that answers the
 * version query alone.
 */
const MIGRATIONS = join(__dirname, '../../..', 'prisma', 'migrations');
const OLDER =
  'PostgreSQL 14.19 is older than this service supports (PostgreSQL 15 to 18): upgrade the server to 15 or later';
const NEWER =
  'PostgreSQL 19beta1 is newer than this service is tested on (PostgreSQL 15 to 18); starting anyway';

const fakes: FakePostgres[] = [];
afterEach(async () => {
  jest.restoreAllMocks();
  for (const fake of fakes.splice(0)) await fake.close();
});

async function fake(version: string, versionNumber: number): Promise<FakePostgres> {
  const started = await startFakePostgres(version, versionNumber);
  fakes.push(started);
  return started;
}

describe("the run's server", () => {
  let database: TestDatabase;
  beforeAll(async () => (database = await createTestDatabase()));
  afterAll(() => database?.drop());

  it('is of the supported range (a CI run on another fails here, naming it)', async () => {
    const client = new Client({ connectionString: database.url });
    await client.connect();
    const { rows } = await client
      .query<{ number: number; version: string }>(
        "SELECT current_setting('server_version_num')::int AS number, current_setting('server_version') AS version",
      )
      .finally(() => client.end());
    const [{ number, version }] = rows;
    expect([version, judgeServerVersion(number, version)]).toEqual([
      version,
      { kind: 'supported' },
    ]);
  });

  it('starts the server without a word about its version', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn');
    await checkDatabaseAtStart(database.url);
    expect(warn).not.toHaveBeenCalled();
  });
});

describe('a server below the range', () => {
  it("refuses the server's start with one sentence naming its version and the range", async () => {
    const server = await fake('14.19 (Debian 14.19-1.pgdg120+1)', 140019);
    const refusal = checkDatabaseAtStart(server.url);
    await expect(refusal).rejects.toBeInstanceOf(StartupError);
    await expect(refusal).rejects.toThrow(OLDER);
  });

  it('refuses the migrations before anything is written', async () => {
    const server = await fake('14.19', 140019);
    await expect(
      applyMigrations({ databaseUrl: server.url, migrationsDir: MIGRATIONS }),
    ).rejects.toThrow(OLDER);
    expect(server.queries).toEqual([expect.stringContaining('server_version_num')]);
  });
});

describe('a server above the range', () => {
  it("warns at the server's start, and goes on", async () => {
    const server = await fake('19beta1', 190000);
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    // The stand-in answers nothing else: the tables are not checked, and the start goes on.
    await expect(checkDatabaseAtStart(server.url)).resolves.toBeUndefined();
    expect(warn.mock.calls[0]).toEqual([NEWER]);
  });

  it("warns in the migrations' output, and goes on", async () => {
    const server = await fake('19beta1', 190000);
    const lines: string[] = [];
    // The stand-in refuses the next statement (the migration lock): the warning came before it.
    await expect(
      applyMigrations({
        databaseUrl: server.url,
        migrationsDir: MIGRATIONS,
        log: (line) => lines.push(line),
      }),
    ).rejects.toThrow('not supported by the fake server');
    expect(lines).toEqual([NEWER]);
    expect(server.queries[1]).toContain('pg_try_advisory_lock');
  });
});

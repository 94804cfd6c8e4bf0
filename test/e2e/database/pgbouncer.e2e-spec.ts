import { join } from 'node:path';
import { Client } from 'pg';
import { applyMigrations } from '../../../src/database/migrator';
import { Database } from '../../../src/database/database';
import { describeNeeding } from '../../support/programs';
import { createTestApp, type TestApp } from '../../support/app';
import { waitForLockWaiter } from '../../support/database';
import { createCompany } from '../../support/factories';
import { createTenant, getWithKey } from '../../support/http';
import { type PgBouncer, startPgBouncer } from '../../support/pgbouncer';
import {
  CLUSTER_SETUP_TIMEOUT_MS,
  type PostgresCluster,
  startPostgresCluster,
} from '../../support/postgres-cluster';

/*
 * The service behind PgBouncer in transaction pooling mode (a server and a PgBouncer of this
 * file's own): each transaction may run on another server connection, so nothing may rest on
 * session state, and PgBouncer refuses startup parameters it does not know. With
 * DATABASE_POOLER=pgbouncer the pool sends none; the session settings are the role's, as
 * docs/scaling.md says to set them. (.ci/pgbouncer-suite runs the whole suite this way.)
 */
describeNeeding('pgbouncer', __filename)('behind PgBouncer in transaction pooling mode', () => {
  let cluster: PostgresCluster;
  let bouncer: PgBouncer;
  let t: TestApp;
  let key: string;
  let companyId: string;

  beforeAll(async () => {
    cluster = await startPostgresCluster();
    await applyMigrations({
      databaseUrl: cluster.url,
      migrationsDir: join(__dirname, '../../..', 'prisma', 'migrations'),
    });
    // The server's own zone is far from UTC: only the role's setting gives the service UTC.
    await sql(
      "ALTER SYSTEM SET TimeZone = 'Pacific/Chatham'",
      'SELECT pg_reload_conf()',
      "ALTER ROLE postgres SET TimeZone = 'UTC'",
      'ALTER ROLE postgres SET extra_float_digits = 1',
      'ALTER ROLE postgres SET jit = off',
      'ALTER ROLE postgres SET statement_timeout = 5000',
    );
    bouncer = await startPgBouncer(cluster.url);
    t = await createTestApp({
      database: {
        url: bouncer.url('postgres'),
        directUrl: cluster.url,
        drop: () => Promise.resolve(),
      },
      env: { DATABASE_POOLER: 'pgbouncer' },
    });
    const tenant = await createTenant(t.prisma);
    key = tenant.key;
    companyId = (await createCompany(t.prisma, tenant.workspace.id)).id;
  }, CLUSTER_SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await t?.close();
    await bouncer?.stop();
    await cluster?.destroy();
  });

  /** Each statement on its own (ALTER SYSTEM refuses a transaction block), directly on the server. */
  async function sql(...statements: string[]): Promise<void> {
    const client = new Client({ connectionString: cluster.url });
    await client.connect();
    try {
      for (const statement of statements) await client.query(statement);
    } finally {
      await client.end();
    }
  }

  it("every pooled connection has the role's settings, none sent by the pool", async () => {
    const database = t.app.get(Database);
    // More statements at once than PgBouncer has server connections (4): several of them serve.
    const settings = await Promise.all(
      Array.from({ length: 20 }, () =>
        database.query(
          `SELECT current_setting('TimeZone') AS "TimeZone",
          current_setting('extra_float_digits') AS extra_float_digits,
          current_setting('jit') AS jit, current_setting('statement_timeout') AS statement_timeout`,
          [],
        ),
      ),
    );
    for (const [row] of settings) {
      expect(row).toEqual({
        TimeZone: 'UTC',
        extra_float_digits: '1',
        jit: 'off',
        statement_timeout: '5s',
      });
    }
  });

  it('lists, feeds, single reads and key lookups answer through it', async () => {
    for (const path of [
      '/v1/me',
      '/v1/companies',
      '/v1/companies/changes',
      `/v1/companies/${companyId}`,
      '/v1/leads',
      '/v1/leads/changes',
    ]) {
      expect([path, (await getWithKey(t.app, path, key)).status]).toEqual([path, 200]);
    }
  });

  it("a statement stuck behind a lock gives a 503 after the role's statement_timeout", async () => {
    const locker = new Client({ connectionString: cluster.url });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE companies IN ACCESS EXCLUSIVE MODE');
      const pending = getWithKey(t.app, '/v1/companies', key)
        .timeout(15_000)
        .then((r) => r);
      await waitForLockWaiter(locker);
      const response = await pending;
      expect(response.status).toBe(503);
      expect(response.headers['retry-after']).toBe('5');
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
    }
  }, 30_000);

  it('with the startup settings (DATABASE_POOLER=none), PgBouncer refuses the connections', async () => {
    const direct = await createTestApp({
      database: t.database,
      env: { DATABASE_POOLER: 'none' },
    });
    try {
      expect((await getWithKey(direct.app, '/v1/me', key)).status).toBe(503);
    } finally {
      await direct.close();
    }
  });
});

import { join } from 'node:path';
import { Client } from 'pg';
import { waitForLockWaiter } from '../../support/database';
import request from 'supertest';
import { generateApiKey } from '../../../src/auth/api-key';
import { applyMigrations } from '../../../src/database/migrator';
import { createTestApp, type TestApp } from '../../support/app';
import { createCompany, createLead } from '../../support/factories';
import { createTenant, expectErrorEnvelope } from '../../support/http';
import {
  CLUSTER_SETUP_TIMEOUT_MS,
  type PostgresCluster,
  startPostgresCluster,
} from '../../support/postgres-cluster';

/*
 * The application on a PostgreSQL server of this file's own, which the test stops (as a crash
 * would: `pg_ctl stop -m immediate`) and starts again. No duration is asserted: every request has
 * a client timeout well above the application's own bounds (1 s to get a connection, 5 s per
 * statement), so a request that hangs fails as a timeout instead of giving its 503.
 */
const CLIENT_TIMEOUT_MS = 8_000;
const ENDPOINTS = ['/v1/companies', '/v1/leads', '/v1/me'];

let cluster: PostgresCluster;
let t: TestApp;
let key: string;

beforeAll(async () => {
  cluster = await startPostgresCluster();
  await applyMigrations({
    databaseUrl: cluster.url,
    migrationsDir: join(__dirname, '../../..', 'prisma', 'migrations'),
  });
  // The cluster owns the database: nothing for the app to drop.
  // A direct connection to its own server, whatever pooler the run's database is behind.
  t = await createTestApp({
    database: { url: cluster.url, directUrl: cluster.url, drop: () => Promise.resolve() },
    env: { DATABASE_POOLER: 'none' },
  });
  const tenant = await createTenant(t.prisma);
  ({ key } = tenant);
  const company = await createCompany(t.prisma, tenant.workspace.id);
  await createLead(t.prisma, company);
}, CLUSTER_SETUP_TIMEOUT_MS);

afterAll(async () => {
  await t?.close();
  await cluster?.destroy();
});

const get = (path: string, authorization = `Bearer ${key}`) =>
  request(t.app.getHttpServer())
    .get(path)
    .set('Authorization', authorization)
    .timeout(CLIENT_TIMEOUT_MS);

async function expectServiceUnavailable(path: string, authorization?: string): Promise<void> {
  const response = await get(path, authorization);
  expectErrorEnvelope(response, {
    status: 503,
    error: 'SERVICE_UNAVAILABLE',
    path,
    message: 'Service temporarily unavailable',
  });
  // A database that failed, not a burst of load (test/e2e/fair-share/load-shedding.e2e-spec.ts):
  // retry later.
  expect(response.headers['retry-after']).toBe('5');
}

async function expectServing(): Promise<void> {
  for (const path of ENDPOINTS) expect((await get(path)).status).toBe(200);
  expect((await get('/v1/companies')).body.total).toBe(1);
  expect((await get('/health/ready')).status).toBe(200);
}

it('serves while the database is up', async () => {
  await expectServing();
});

it('the database stopped: 503 everywhere, in bounded time, and the process keeps answering', async () => {
  await cluster.stop();

  // Twice: first on the pool's connections that died, then on new connections refused.
  for (let round = 0; round < 2; round++) {
    for (const path of ENDPOINTS) await expectServiceUnavailable(path);
    // Without the database, an unknown key cannot be told from a valid one: 503, not 401.
    await expectServiceUnavailable('/v1/me', `Bearer ${generateApiKey()}`);
  }
  // What needs no database still answers as usual.
  expect((await get('/v1/me', 'Bearer st_not-a-key')).status).toBe(401);
  expect((await get('/v1/nowhere')).status).toBe(404);
  expect((await get('/health/ready')).status).toBe(503);
}, 60_000);

it('the database back: the same requests answer 200, without a restart', async () => {
  await cluster.start();

  await expectServing();
}, 30_000);

describe('a query that waits too long (statement_timeout)', () => {
  let locker: Client;

  beforeEach(async () => {
    locker = new Client({ connectionString: cluster.url });
    await locker.connect();
  });

  afterEach(async () => {
    await locker.query('ROLLBACK');
    await locker.end();
  });

  it.each([
    ['a list', 'companies', '/v1/companies'],
    ['the key lookup', 'api_keys', '/v1/me'],
  ])(
    'in %s: 503, then 200 once the lock is gone',
    async (_case, table, path) => {
      await locker.query('BEGIN');
      await locker.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);

      const pending = get(path).then((response) => response);
      await waitForLockWaiter(locker);
      const response = await pending;
      expectErrorEnvelope(response, {
        status: 503,
        error: 'SERVICE_UNAVAILABLE',
        path,
        message: 'Service temporarily unavailable',
      });
      expect(response.headers['retry-after']).toBe('5');

      await locker.query('ROLLBACK');
      expect((await get(path)).status).toBe(200);
    },
    30_000,
  );
});

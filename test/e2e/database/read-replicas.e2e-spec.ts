import { join } from 'node:path';
import { Client } from 'pg';
import { applyMigrations } from '../../../src/database/migrator';
import { Database } from '../../../src/database/database';
import { createTestApp, type TestApp } from '../../support/app';
import { createApiKey, createCompany } from '../../support/factories';
import { createTenant, getWithKey } from '../../support/http';
import {
  CLUSTER_SETUP_TIMEOUT_MS,
  type PostgresCluster,
  startPostgresCluster,
} from '../../support/postgres-cluster';
import { until } from '../../support/until';

/*
 * Read replicas on real servers of the run's major: a primary and two hot standbys streaming
 * from it, made with initdb, a base backup and pg_ctl on free ports under /tmp. A replica whose replay is paused
 * (pg_wal_replay_pause) keeps its data as of that moment: a read that misses a row the primary has
 * was served by it. The checks are run by hand (Database.replicaReads.check): the background
 * ones are stopped, so that none runs behind a test's back (one that ran between a replica's stop
 * and the next read skipped it before the read could find it gone). The lag bound is a minute
 * unless a test is about it.
 */
describe('read replicas', () => {
  let primary: PostgresCluster;
  let replicas: PostgresCluster[];
  let t: TestApp;
  let database: Database;
  let workspaceId: string;
  let key: string;

  beforeAll(async () => {
    primary = await startPostgresCluster();
    await applyMigrations({
      databaseUrl: primary.url,
      migrationsDir: join(__dirname, '../../..', 'prisma', 'migrations'),
    });
    replicas = [];
    for (let i = 0; i < 2; i++) {
      replicas.push(await startPostgresCluster({ standbyOf: primary }));
    }
    t = await createTestApp({
      database: { url: primary.url, directUrl: primary.url, drop: () => Promise.resolve() },
      env: {
        DATABASE_READ_URL: replicas.map((replica) => replica.url).join(','),
        READ_REPLICA_MAX_LAG_MS: '60000',
        // Direct connections to its own servers, whatever pooler the run's database is behind.
        DATABASE_POOLER: 'none',
      },
    });
    database = t.app.get(Database);
    database.replicaReads!.stop();
    const tenant = await createTenant(t.prisma);
    workspaceId = tenant.workspace.id;
    key = tenant.key;
    await caughtUp(...replicas);
    await database.replicaReads!.check();
  }, 3 * CLUSTER_SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await t?.close();
    for (const cluster of [...(replicas ?? []), primary]) await cluster?.destroy();
  });

  afterEach(async () => {
    for (const replica of replicas) {
      await sql(replica.url, 'SELECT pg_wal_replay_resume()').catch(() => undefined);
    }
    await caughtUp(...replicas);
    await database.replicaReads!.check();
  });

  async function sql<T = Record<string, unknown>>(url: string, text: string): Promise<T[]> {
    const client = new Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query(text)).rows as T[];
    } finally {
      await client.end();
    }
  }

  /** Until each replica has replayed everything the primary had written when called. */
  async function caughtUp(...standbys: PostgresCluster[]): Promise<void> {
    const [{ lsn }] = await sql<{ lsn: string }>(primary.url, 'SELECT pg_current_wal_lsn() AS lsn');
    for (const standby of standbys) {
      await until(`the replica on ${standby.url} to replay ${lsn}`, async () => {
        const [{ reached }] = await sql<{ reached: boolean }>(
          standby.url,
          `SELECT pg_last_wal_replay_lsn() >= '${lsn}'::pg_lsn AS reached`,
        );
        return reached;
      });
    }
  }

  const pause = (standby: PostgresCluster) => sql(standby.url, 'SELECT pg_wal_replay_pause()');
  const resume = (standby: PostgresCluster) => sql(standby.url, 'SELECT pg_wal_replay_resume()');

  async function ready(): Promise<Record<string, { status: string; reason?: string }>> {
    const response = await getWithKey(t.app, '/health/ready', key);
    expect(response.status).toBe(200);
    return response.body.info.replicas as Record<string, { status: string; reason?: string }>;
  }

  async function listedIds(): Promise<string[]> {
    const response = await getWithKey(t.app, '/v1/companies?limit=200', key);
    expect(response.status).toBe(200);
    return (response.body.data as { id: string }[]).map((company) => company.id);
  }

  it('reads are served by a replica; the key lookup by the primary: a revoked key is refused at once', async () => {
    await Promise.all(replicas.map(pause));
    const company = await createCompany(t.prisma, workspaceId);
    const { key: doomed, id: doomedId } = await createApiKey(t.prisma, workspaceId);

    // Written after both replicas stopped replaying: the list, the feed and the single read miss it.
    for (let i = 0; i < 2; i++) {
      expect(await listedIds()).not.toContain(company.id);
      expect((await getWithKey(t.app, `/v1/companies/${company.id}`, key)).status).toBe(404);
      const feed = await getWithKey(t.app, '/v1/companies/changes?limit=1000', key);
      expect((feed.body.data as { id: string }[]).map((change) => change.id)).not.toContain(
        company.id,
      );
    }
    // The key made after the pause works, and is refused on the request after its revocation: the
    // lookups go to the primary (and lastUsedAt is written there: a standby would refuse it).
    expect((await getWithKey(t.app, '/v1/me', doomed)).status).toBe(200);
    await t.prisma.apiKey.update({ where: { id: doomedId }, data: { revokedAt: new Date() } });
    expect((await getWithKey(t.app, '/v1/me', doomed)).status).toBe(401);

    await Promise.all(replicas.map(resume));
    await caughtUp(...replicas);
    expect(await listedIds()).toContain(company.id);
    expect((await getWithKey(t.app, `/v1/companies/${company.id}`, key)).status).toBe(200);
  });

  it('a stopped replica is skipped (its reads go elsewhere) and readmitted once it is back', async () => {
    const [stopped, other] = replicas;
    await pause(other);
    const company = await createCompany(t.prisma, workspaceId);
    await caughtUp(stopped);
    // The replicas take reads in turn: read until one is served by the paused one (it misses the
    // row), so that the next read is the stopped one's, whatever the earlier tests read.
    let reads = 0;
    while ((await listedIds()).includes(company.id)) expect(++reads).toBeLessThan(3);
    await stopped.stop();
    try {
      // Before any check: the read that finds it gone runs again on the primary, which has the row.
      expect(await listedIds()).toContain(company.id);
      await database.replicaReads!.check();
      expect(await ready()).toMatchObject({
        'replica 1': { status: 'skipped', reason: expect.stringMatching(/unreachable|failed/) },
        'replica 2': { status: 'in use' },
      });
      // Every read now goes to the paused replica, the only one in use.
      for (let i = 0; i < 3; i++) expect(await listedIds()).not.toContain(company.id);
    } finally {
      // Started again whatever failed: the other tests need it.
      await stopped.start();
    }
    await caughtUp(stopped);
    await database.replicaReads!.check();
    expect(await ready()).toMatchObject({
      'replica 1': { status: 'in use' },
      'replica 2': { status: 'in use' },
    });
    // In turn: one of two consecutive reads is served by the readmitted replica, which has the row.
    const seen = [await listedIds(), await listedIds()].map((ids) => ids.includes(company.id));
    expect(seen.sort()).toEqual([false, true]);
  }, 60_000);

  it('a replica more than READ_REPLICA_MAX_LAG_MS behind is skipped until it catches up', async () => {
    const lagBoundMs = 1_000;
    const second = await createTestApp({
      database: t.database,
      env: {
        DATABASE_READ_URL: replicas.map((replica) => replica.url).join(','),
        READ_REPLICA_MAX_LAG_MS: String(lagBoundMs),
        DATABASE_POOLER: 'none',
      },
    });
    try {
      const checks = second.app.get(Database).replicaReads!;
      await checks.check();
      const [lagging, recent] = second.app.get(Database).replicaReads!.replicas;
      expect([lagging.skipped, recent.skipped]).toEqual([null, null]);

      await pause(replicas[0]);
      const company = await createCompany(t.prisma, workspaceId);
      await new Promise((resolve) => setTimeout(resolve, lagBoundMs * 1.5));
      await caughtUp(replicas[1]);
      await checks.check();
      expect(lagging.skipped).toMatch(/behind the primary/);
      expect(recent.skipped).toBeNull();
      for (let i = 0; i < 3; i++) {
        const response = await getWithKey(second.app, '/v1/companies?limit=200', key);
        expect((response.body.data as { id: string }[]).map((c) => c.id)).toContain(company.id);
      }

      await resume(replicas[0]);
      await caughtUp(replicas[0]);
      await checks.check();
      expect(lagging.skipped).toBeNull();
    } finally {
      await second.close();
    }
  }, 60_000);

  interface Change {
    op: 'upsert' | 'delete';
    id: string;
    company?: { name: string };
  }

  it('the feed read from two replicas of different lag, in turn: no skip, no regression', async () => {
    const { workspace, key: feedKey } = await createTenant(t.prisma);
    const ids = Array.from({ length: 12 }, (_, i) => `feed_${i}`);
    // Each write stamps a version into the name: a copy's version of an item must never go down.
    let version = 0;
    const live = new Set<string>();
    const write = async (id: string) => {
      const name = `v${++version}`;
      if (live.has(id)) await t.prisma.company.update({ where: { id }, data: { name } });
      else await createCompany(t.prisma, workspace.id, { id, name });
      live.add(id);
    };
    for (const id of ids) await write(id);

    const copy = new Map<string, number>();
    let cursor: string | undefined;
    let hasMore = true;
    const read = async () => {
      const query = cursor ? `?limit=3&cursor=${cursor}` : '?limit=3';
      const response = await getWithKey(t.app, `/v1/companies/changes${query}`, feedKey);
      expect(response.status).toBe(200);
      for (const change of response.body.data as Change[]) {
        if (change.op === 'delete') {
          copy.delete(change.id);
          continue;
        }
        const seen = Number(change.company!.name.slice(1));
        expect(seen).toBeGreaterThanOrEqual(copy.get(change.id) ?? 0);
        copy.set(change.id, seen);
      }
      cursor = response.body.nextCursor as string;
      hasMore = response.body.hasMore as boolean;
    };

    // The second replica stops replaying: consecutive reads alternate between a replica that is
    // current and one that falls further behind with every write.
    await caughtUp(...replicas);
    await pause(replicas[1]);
    // A writer that stays open across reads: its change, committed last, has the lowest position.
    const open = new Client({ connectionString: primary.url });
    await open.connect();
    try {
      await open.query('BEGIN');
      await open.query(`UPDATE companies SET name = 'v1000' WHERE id = 'feed_2'`);
      for (let round = 0; round < 8; round++) {
        await write(ids[(round * 5) % ids.length]);
        if (round === 3) {
          await t.prisma.company.delete({ where: { id: 'feed_3' } });
          live.delete('feed_3');
        }
        await caughtUp(replicas[0]);
        await read();
        await read();
      }
      await open.query('COMMIT');
    } finally {
      await open.end();
    }
    await resume(replicas[1]);
    await caughtUp(...replicas);
    for (let attempt = 0; hasMore || attempt < 2; attempt++) {
      if (attempt > 100) throw new Error('the feed never caught up');
      await read();
    }

    const source = await t.prisma.company.findMany({ where: { workspaceId: workspace.id } });
    expect(Object.fromEntries(copy)).toEqual(
      Object.fromEntries(source.map((company) => [company.id, Number(company.name.slice(1))])),
    );
    expect(copy.get('feed_2')).toBe(1000);
  }, 60_000);
});

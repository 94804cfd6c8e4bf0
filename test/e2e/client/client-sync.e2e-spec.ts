import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client as PgClient, Pool, type PoolClient } from 'pg';
import { Client, NotFoundError, type ClientOptions } from '../../../clients/typescript/src';
import {
  CRM_FIELDS,
  CRM_VISIT_FIELDS,
  runSync,
  type SyncOptions,
} from '../../../clients/typescript/examples/sync';
import { restricted } from '../../support/selected-fields';
import { createTestApp, listening, type TestApp } from '../../support/app';
import {
  companyInsert,
  companyRow,
  createCompany,
  createContact,
  createLead,
  createVisit,
  daysAgo,
} from '../../support/factories';
import { createTenant, getWithKey } from '../../support/http';

const PAST = new Date('2026-02-20T17:30:00.000Z'); // before the ManualClock's start

/** `count` companies of the workspace, scores from 90 down by `step` (ids in the same order). */
async function insertCompanies(t: TestApp, workspaceId: string, count: number, step: number) {
  const ids = Array.from(
    { length: count },
    (_, i) => `co_${workspaceId}_${String(i).padStart(5, '0')}`,
  );
  await t.prisma.company.createMany({
    data: ids.map((id, i) => ({
      id,
      workspaceId,
      name: `Company ${i}`,
      domain: `company-${i}.example`,
      industry: 'Software',
      size: '51-200',
      country: 'France',
      city: 'Lyon',
      revenue: '10M-50M',
      intentScore: 90 - i * step,
      intentLevel: 'warm' as const,
      icpScore: 60,
      commercialScore: 55,
      crmStatus: 'new' as const,
      visitsCount: 3,
      firstSeen: PAST,
      lastSeen: PAST,
    })),
  });
  return ids;
}

async function insertLeads(t: TestApp, workspaceId: string, companyIds: string[], count: number) {
  const ids = Array.from(
    { length: count },
    (_, i) => `ld_${workspaceId}_${String(i).padStart(5, '0')}`,
  );
  await t.prisma.lead.createMany({
    data: ids.map((id, i) => ({
      id,
      workspaceId,
      companyId: companyIds[i % companyIds.length] ?? '',
      contactName: `Contact ${i}`,
      contactTitle: 'VP Sales',
      intentScore: i % 50,
      intentLevel: 'hot' as const,
      signal: 'Visited the pricing page',
      recommendedAction: 'Call within 24 hours',
      status: 'new' as const,
      createdAt: PAST,
    })),
  });
  return ids;
}

/**
 * A client whose sleeps move the server's clock by the whole wait (rate-limit windows end at
 * once) and real time by a little (so that a transaction holding a feed's changes back can end
 * meanwhile), and whose fetch records every request and its status, then runs `afterResponse`
 * (to change data) with the response's body.
 */
function instrumentedClient(
  t: TestApp,
  baseUrl: string,
  apiKey: string,
  afterResponse: (url: URL, body: unknown) => Promise<void> = () => Promise.resolve(),
  options: Partial<ClientOptions> = {},
) {
  const requests: { path: string; status: number }[] = [];
  const sleeps: number[] = [];
  const client = new Client({
    apiKey,
    baseUrl,
    fetch: async (input, init) => {
      const response = await fetch(input, init);
      const url = new URL(input); // the client passes a string
      requests.push({ path: `${url.pathname}${url.search}`, status: response.status });
      // A stream's NDJSON is not one body: only the pages' JSON goes to afterResponse.
      if (response.headers.get('content-type')?.startsWith('application/json')) {
        await afterResponse(url, await response.clone().json());
      }
      return response;
    },
    sleep: (ms) => {
      sleeps.push(ms);
      t.clock.advance(ms);
      return new Promise((resolve) => setTimeout(resolve, Math.min(ms, 50)));
    },
    now: () => t.clock.now(),
    random: () => 0.5,
    ...options,
  });
  return { client, requests, sleeps };
}

// Patient with held-back changes: the long transactions of this file's writers hold them back.
const MAX_WAITS = 200;

/** What the sync wrote: the copy of one type, id -> item. */
async function copyOf(dir: string, type: 'companies' | 'leads'): Promise<Record<string, unknown>> {
  return JSON.parse(await readFile(join(dir, 'crm', `${type}.json`), 'utf8')) as Record<
    string,
    unknown
  >;
}

/**
 * The whole source, read through the list in pages of 200 (while nothing writes), id -> item.
 * Each request in a rate-limit window of its own: the server's clock moves a minute first.
 */
async function source(
  t: TestApp,
  key: string,
  type: 'companies' | 'leads',
): Promise<Record<string, unknown>> {
  const items: Record<string, unknown> = {};
  for (let offset = 0, total = 1; offset < total; offset += 200) {
    t.clock.advance(60_000);
    const page = await getWithKey(t.app, `/v1/${type}?limit=200&offset=${offset}`, key).expect(200);
    total = page.body.total as number;
    for (const item of page.body.data as { id: string }[]) items[item.id] = item;
  }
  return items;
}

async function expectCopyEqualsSource(
  t: TestApp,
  key: string,
  dir: string,
  fields?: SyncOptions['fields'],
): Promise<void> {
  for (const type of ['companies', 'leads'] as const) {
    const whole = await source(t, key, type);
    const names = fields?.[type];
    const expected = names
      ? Object.fromEntries(
          Object.entries(whole).map(([id, item]) => [
            id,
            restricted(item as Record<string, unknown>, names),
          ]),
        )
      : whole;
    const copy = await copyOf(dir, type);
    // Named first, compared whole after: a failure says which ids are extra or missing.
    expect(Object.keys(copy).sort()).toEqual(Object.keys(expected).sort());
    expect(copy).toEqual(expected);
  }
}

describe('the CRM sync example (clients/typescript/examples/sync.ts)', () => {
  let dir: string;
  let paths: Pick<SyncOptions, 'stateFile' | 'storeDir'>;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'client-sync-'));
    paths = { stateFile: join(dir, 'state.json'), storeDir: join(dir, 'crm') };
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  describe('with a rate limit of 10 requests per minute and 30 pages to read', () => {
    let t: TestApp;
    let baseUrl: string;

    beforeAll(async () => {
      t = await createTestApp({ env: { RATE_LIMIT_PER_MINUTE: '10' } });
      baseUrl = await listening(t);
    });

    afterAll(async () => {
      await t.close();
    });

    it('copies everything without a single 429, then asks once per feed when nothing changed', async () => {
      const { workspace, key } = await createTenant(t.prisma);
      const companyIds = await insertCompanies(t, workspace.id, 290, 0.1);
      await insertLeads(t, workspace.id, companyIds, 290);
      // Backoff below 5 s: any longer sleep is a wait for the next rate-limit window.
      const first = instrumentedClient(t, baseUrl, key, undefined, { backoffMaxMs: 5_000 });

      const result = await runSync({
        client: first.client,
        ...paths,
        limit: 20,
        maxWaits: MAX_WAITS,
      });

      const everything = {
        restarted: false,
        fromStart: true,
        upserts: 290,
        deletes: 0,
        removed: 0,
        caughtUp: true,
      };
      expect(result).toEqual({ companies: everything, leads: everything });
      await expectCopyEqualsSource(t, key, dir);
      // 15 pages of each (14 of 20, one of 10), in windows of 10 requests: the client waited for
      // the reset whenever X-RateLimit-Remaining said 0, so it never spent a request on a 429.
      expect(first.requests.length).toBeGreaterThanOrEqual(30);
      expect(first.requests.filter((request) => request.status !== 200)).toEqual([]);
      expect(first.sleeps.filter((ms) => ms > 5_000).length).toBeGreaterThanOrEqual(2);
      const state = JSON.parse(await readFile(paths.stateFile, 'utf8'));
      expect(state).toEqual({ companies: expect.any(String), leads: expect.any(String) });

      const second = instrumentedClient(t, baseUrl, key);
      const again = await runSync({ client: second.client, ...paths, limit: 20 });

      const nothing = { ...everything, fromStart: false, upserts: 0 };
      expect(again).toEqual({ companies: nothing, leads: nothing });
      expect(second.requests).toEqual([
        {
          path: `/v1/companies/changes?limit=20&cursor=${encodeURIComponent(state.companies)}`,
          status: 200,
        },
        {
          path: `/v1/leads/changes?limit=20&cursor=${encodeURIComponent(state.leads)}`,
          status: 200,
        },
      ]);
      expect(JSON.parse(await readFile(paths.stateFile, 'utf8'))).toEqual(state);
    });
  });

  describe('against the service', () => {
    let t: TestApp;
    let baseUrl: string;

    beforeAll(async () => {
      t = await createTestApp({ env: { RATE_LIMIT_PER_MINUTE: '100000' } });
      baseUrl = await listening(t);
    });

    afterAll(async () => {
      await t.close();
    });

    it('ends with a copy equal to the source after concurrent writers insert, change, delete and re-create', async () => {
      const { workspace, key } = await createTenant(t.prisma);
      const other = await createTenant(t.prisma); // written to as well: none of it may be copied
      const pool = new Pool({ connectionString: t.database.url, max: 8 });
      const writers = new Writers(pool);
      try {
        const mine = writers.workspace(workspace.id);
        await mine.seed(40, 60);
        const theirs = writers.workspace(other.workspace.id);
        await theirs.seed(10, 10);
        const { client } = instrumentedClient(t, baseUrl, key);
        const sync = () => runSync({ client, ...paths, limit: 25, maxWaits: MAX_WAITS });

        // A fixed number of writes, not a duration: unpaced, the writers made about 1,300 a second
        // here, and a run chased them for up to 45 s (CI: past the test's timeout). With a fixed
        // volume, the runs end once the writers do, however fast either side is on the machine.
        const running = Promise.all([
          writers.loop(mine, 1, 150, ['insertCompany', 'updateCompany', 'renameCompany']),
          writers.loop(mine, 2, 150, ['deleteCompany', 'recreateCompany', 'updateCompany']),
          writers.loop(mine, 3, 150, [
            'insertContact',
            'updateContact',
            'deleteContact',
            'moveContact',
          ]),
          writers.loop(mine, 4, 150, ['insertLead', 'updateLead', 'deleteLead', 'recreateLead']),
          writers.loop(mine, 5, 15, ['longTransaction']),
          writers.loop(theirs, 6, 150, ['insertCompany', 'updateCompany', 'deleteCompany']),
        ]);
        let writing = true;
        running.then(
          () => (writing = false),
          () => (writing = false), // rethrown by the await below
        );
        const runs = [];
        try {
          while (writing || runs.length < 5) runs.push(await sync());
        } finally {
          writers.stop();
          await running;
        }
        const last = await sync();

        // The writers did every kind of write, and the runs applied deletions while they did.
        for (const kind of Writers.KINDS) expect(writers.done[kind] ?? 0).toBeGreaterThan(0);
        const deletes = runs.reduce(
          (sum, run) => sum + run.companies.deletes + run.leads.deletes,
          0,
        );
        expect(deletes).toBeGreaterThan(0);
        expect(last.companies.caughtUp && last.leads.caughtUp).toBe(true);

        await expectCopyEqualsSource(t, key, dir);
        // The single reads agree: a copied company is served as copied, a deleted one is a 404.
        const copied = await copyOf(dir, 'companies');
        for (const id of Object.keys(copied).slice(0, 5)) {
          expect(await client.getCompany(id)).toEqual(copied[id]);
        }
        const gone = mine.deletedCompanies.find((id) => !(id in copied));
        expect(gone).toBeDefined();
        await expect(client.getCompany(gone ?? '')).rejects.toBeInstanceOf(NotFoundError);
      } finally {
        await pool.end();
      }
    }, 120_000);

    it('does not miss a company that moves in the list during the run', async () => {
      const { workspace, key } = await createTenant(t.prisma);
      const ids = await insertCompanies(t, workspace.id, 600, 0.1); // one transaction: id order
      // Once the first page is read, a company already read and one not yet read are visited:
      // both jump to the top of the list. The feed brings each again at its new place, last.
      let moved = false;
      const { client } = instrumentedClient(t, baseUrl, key, async (url, body) => {
        const page = body as { data?: unknown[] };
        if (moved || url.pathname !== '/v1/companies/changes' || !page.data?.length) return;
        moved = true;
        for (const id of [ids[100] ?? '', ids[450] ?? '']) {
          await t.prisma.company.update({
            where: { id },
            data: { intentScore: 100, intentLevel: 'hot', lastSeen: new Date(t.clock.now()) },
          });
        }
      });

      const result = await runSync({ client, ...paths, limit: 200, maxWaits: MAX_WAITS });

      expect(result.companies).toMatchObject({ upserts: 601, caughtUp: true });
      const copy = await copyOf(dir, 'companies');
      expect(copy[ids[100] ?? '']).toMatchObject({ intentScore: 100 });
      expect(copy[ids[450] ?? '']).toMatchObject({ intentScore: 100 });
      await expectCopyEqualsSource(t, key, dir);
    });

    it('on a 410 starts the feed again without a cursor and replaces the copy', async () => {
      const { workspace, key } = await createTenant(t.prisma);
      const companies = [];
      for (let i = 0; i < 4; i++) {
        const company = await createCompany(t.prisma, workspace.id);
        await createContact(t.prisma, company);
        await createLead(t.prisma, company);
        companies.push(company);
      }
      const { client } = instrumentedClient(t, baseUrl, key);
      const sync = () => runSync({ client, ...paths, limit: 2, maxWaits: MAX_WAITS });
      await sync();
      const [pruned, changed] = companies;

      // What prune-changes does, in one transaction: a deletion's record removed, and the
      // workspace's horizon raised past the stored cursor. The copy can no longer learn that
      // `pruned` is gone from the feed: only a fresh pass can.
      const sql = new PgClient({ connectionString: t.database.url });
      await sql.connect();
      try {
        await sql.query('BEGIN');
        await sql.query('DELETE FROM companies WHERE id = $1', [pruned.id]);
        await sql.query('DELETE FROM company_changes WHERE workspace_id = $1 AND id = $2', [
          workspace.id,
          pruned.id,
        ]);
        await sql.query(
          `INSERT INTO change_horizons (workspace_id, feed, pruned_txid, pruned_id)
           VALUES ($1, 'companies', pg_current_xact_id(), 'zzzz')`,
          [workspace.id],
        );
        await sql.query('COMMIT');
      } finally {
        await sql.end();
      }
      await t.prisma.company.update({ where: { id: changed.id }, data: { intentScore: 99 } });
      expect(Object.keys(await copyOf(dir, 'companies'))).toContain(pruned.id);

      const result = await sync();

      expect(result.companies).toEqual({
        restarted: true,
        fromStart: true,
        upserts: 3,
        deletes: 0,
        removed: 1,
        caughtUp: true,
      });
      // The leads feed was not pruned: it goes on from its cursor, with the deleted lead.
      expect(result.leads).toMatchObject({ restarted: false, fromStart: false, deletes: 1 });
      await expectCopyEqualsSource(t, key, dir);
      expect(Object.keys(await copyOf(dir, 'companies'))).not.toContain(pruned.id);

      // The cursor stored at the end of the fresh pass is a good one.
      const next = await sync();
      expect(next.companies).toMatchObject({ restarted: false, fromStart: false, upserts: 0 });
    });

    it('stores no cursor past a page it could not write, so the next run writes it', async () => {
      const { workspace, key } = await createTenant(t.prisma);
      await insertCompanies(t, workspace.id, 30, 1);
      // Once the second page has come, the copy can no longer be written: the file written aside
      // before the rename is in the way (a full disk, in real life).
      const obstacle = join(paths.storeDir, 'companies.json.tmp');
      let pages = 0;
      const failing = instrumentedClient(t, baseUrl, key, async (url, body) => {
        const page = body as { data?: unknown[] };
        if (url.pathname === '/v1/companies/changes' && page.data?.length && ++pages === 2) {
          await mkdir(obstacle, { recursive: true });
        }
      });
      const options = { ...paths, limit: 10, maxWaits: MAX_WAITS };

      await expect(runSync({ client: failing.client, ...options })).rejects.toMatchObject({
        code: 'EISDIR',
      });
      expect(Object.keys(await copyOf(dir, 'companies'))).toHaveLength(10);

      await rm(obstacle, { recursive: true });
      const { client } = instrumentedClient(t, baseUrl, key);
      const result = await runSync({ client, ...options });
      expect(result.companies).toMatchObject({ fromStart: false, upserts: 20, caughtUp: true });
      await expectCopyEqualsSource(t, key, dir);
    });

    it('stores no cursor when the run fails, so the next run reads the same again', async () => {
      const { workspace, key } = await createTenant(t.prisma);
      await insertCompanies(t, workspace.id, 3, 1);
      const revoked = new Client({ apiKey: 'st_revoked', baseUrl });

      await expect(runSync({ client: revoked, ...paths })).rejects.toThrow('401 UNAUTHORIZED');
      await expect(readFile(paths.stateFile, 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });

      const { client } = instrumentedClient(t, baseUrl, key);
      const result = await runSync({ client, ...paths, maxWaits: MAX_WAITS });
      expect(result.companies).toMatchObject({ fromStart: true, upserts: 3, caughtUp: true });
      await expectCopyEqualsSource(t, key, dir);
    });

    it('with recentVisits, keeps the visits of the last days of each hot company, and drops a company no longer hot', async () => {
      const { workspace, key } = await createTenant(t.prisma);
      const other = await createTenant(t.prisma);
      const hot = await createCompany(t.prisma, workspace.id, { intentLevel: 'hot' });
      const quiet = await createCompany(t.prisma, workspace.id, { intentLevel: 'hot' });
      const warm = await createCompany(t.prisma, workspace.id, { intentLevel: 'warm' });
      const theirs = await createCompany(t.prisma, other.workspace.id, { intentLevel: 'hot' });
      const pricing = await createVisit(t.prisma, hot, {
        startedAt: daysAgo(1),
        source: 'google',
        pages: [{ path: '/' }, { path: '/pricing', title: 'Pricing' }],
      });
      const blog = await createVisit(t.prisma, hot, { startedAt: daysAgo(3) });
      await createVisit(t.prisma, hot, { startedAt: daysAgo(20) }); // before the window
      await createVisit(t.prisma, warm, { startedAt: daysAgo(1) });
      await createVisit(t.prisma, theirs, { startedAt: daysAgo(1) });
      const { client, requests } = instrumentedClient(t, baseUrl, key);
      const sync = () =>
        runSync({ client, ...paths, fields: CRM_FIELDS, recentVisits: {}, maxWaits: MAX_WAITS });

      const result = await sync();

      expect(result.recentVisits).toEqual({ companies: 2, visits: 2 });
      const visitsOf = async () =>
        JSON.parse(await readFile(join(dir, 'crm', 'visits.json'), 'utf8')) as Record<
          string,
          unknown
        >;
      const read = await getWithKey(
        t.app,
        `/v1/visits?companyId=${hot.id}&since=${encodeURIComponent(daysAgo(14).toISOString())}`,
        key,
      ).expect(200);
      const served = read.body.data as Record<string, unknown>[];
      expect(served.map((visit) => visit.id)).toEqual([pricing.visit.id, blog.visit.id]);
      expect(await visitsOf()).toEqual({
        [hot.id]: served.map((visit) => restricted(visit, CRM_VISIT_FIELDS)),
        [quiet.id]: [],
      });
      // Two companies, one request: up to 100 companyIds go in one.
      const visitRequests = requests.filter((r) => r.path.startsWith('/v1/visits?'));
      expect(visitRequests).toHaveLength(1);
      expect(visitRequests[0].path).toContain(`companyId=${hot.id}%2C${quiet.id}`);

      await t.prisma.company.update({ where: { id: hot.id }, data: { intentLevel: 'warm' } });
      expect((await sync()).recentVisits).toEqual({ companies: 1, visits: 0 });
      expect(await visitsOf()).toEqual({ [quiet.id]: [] });
    });

    it('refuses recentVisits when the companies fields leave out intentLevel, or days is out of range, before reading', async () => {
      const { key } = await createTenant(t.prisma);
      const { client, requests } = instrumentedClient(t, baseUrl, key);
      await expect(
        runSync({ client, ...paths, fields: { companies: ['name'] }, recentVisits: {} }),
      ).rejects.toThrow("recentVisits needs 'intentLevel' among the companies' fields");
      await expect(runSync({ client, ...paths, recentVisits: { days: 0 } })).rejects.toThrow(
        'recentVisits.days must be an integer from 1 to 395, not 0',
      );
      expect(requests).toEqual([]);
    });
  });

  describe('through the change streams (no limit: the default)', () => {
    let t: TestApp;
    let baseUrl: string;

    beforeAll(async () => {
      t = await createTestApp();
      baseUrl = await listening(t);
    });

    afterAll(async () => {
      await t.close();
    });

    /**
     * A client whose fetch records each request, and cuts the body of the first stream of the
     * companies' feed after `cutAfterBytes` (a dropped connection), if given.
     */
    function streamingClient(key: string, cutAfterBytes?: number) {
      const requests: { path: string; status: number }[] = [];
      let cut = cutAfterBytes === undefined;
      const client = new Client({
        apiKey: key,
        baseUrl,
        fetch: async (input, init) => {
          const response = await fetch(input, init);
          const url = new URL(input);
          requests.push({ path: `${url.pathname}${url.search}`, status: response.status });
          if (cut || url.pathname !== '/v1/companies/changes/stream' || !response.body) {
            return response;
          }
          cut = true;
          const reader = response.body.getReader();
          let sent = 0;
          const body = new ReadableStream<Uint8Array>({
            async pull(controller) {
              const { done, value } = await reader.read();
              if (done) return controller.close();
              sent += value.length;
              if (sent > (cutAfterBytes ?? 0)) {
                await reader.cancel();
                return controller.error(new TypeError('terminated'));
              }
              controller.enqueue(value);
            },
          });
          return new Response(body, { status: response.status, headers: response.headers });
        },
        sleep: () => new Promise((resolve) => setTimeout(resolve, 10)),
        random: () => 0.5,
      });
      return { client, requests };
    }

    it('loads the whole workspace in one request per feed, and catches up in one more', async () => {
      const { workspace, key } = await createTenant(t.prisma);
      const companyIds = await insertCompanies(t, workspace.id, 2_500, 0.01);
      await insertLeads(t, workspace.id, companyIds, 400);
      const first = streamingClient(key);
      const result = await runSync({ client: first.client, ...paths });
      expect(result.companies).toMatchObject({ fromStart: true, upserts: 2_500, caughtUp: true });
      expect(result.leads).toMatchObject({ fromStart: true, upserts: 400, caughtUp: true });
      expect(first.requests).toEqual([
        { path: '/v1/companies/changes/stream', status: 200 },
        { path: '/v1/leads/changes/stream', status: 200 },
      ]);
      await expectCopyEqualsSource(t, key, dir);

      await t.prisma.company.delete({ where: { id: companyIds[0] } });
      const second = streamingClient(key);
      const again = await runSync({ client: second.client, ...paths });
      expect(again.companies).toMatchObject({ fromStart: false, deletes: 1, caughtUp: true });
      expect(second.requests.map(({ path }) => path.split('?')[0])).toEqual([
        '/v1/companies/changes/stream',
        '/v1/leads/changes/stream',
      ]);
      await expectCopyEqualsSource(t, key, dir);
    }, 60_000);

    it('copies only the fields a CRM maps, with fields, and keeps them up to date', async () => {
      const { workspace, key } = await createTenant(t.prisma);
      const companyIds = await insertCompanies(t, workspace.id, 300, 0.1);
      await insertLeads(t, workspace.id, companyIds, 100);
      const first = streamingClient(key);
      await runSync({ client: first.client, ...paths, fields: CRM_FIELDS });
      expect(first.requests.map(({ path }) => decodeURIComponent(path))).toEqual([
        `/v1/companies/changes/stream?fields=${CRM_FIELDS.companies.join(',')}`,
        `/v1/leads/changes/stream?fields=${CRM_FIELDS.leads.join(',')}`,
      ]);
      await expectCopyEqualsSource(t, key, dir, CRM_FIELDS);

      await t.prisma.company.update({ where: { id: companyIds[1] }, data: { name: 'Renamed' } });
      await t.prisma.company.delete({ where: { id: companyIds[0] } });
      const again = await runSync({
        client: streamingClient(key).client,
        ...paths,
        fields: CRM_FIELDS,
      });
      expect(again.companies).toMatchObject({ upserts: 1, deletes: 1, caughtUp: true });
      await expectCopyEqualsSource(t, key, dir, CRM_FIELDS);
    }, 60_000);

    it('resumes a stream cut mid-way from its last checkpoint, and ends with the source', async () => {
      const { workspace, key } = await createTenant(t.prisma);
      await insertCompanies(t, workspace.id, 2_500, 0.01);
      // Cut after about 1,200 of the companies' changes (about 500 bytes each).
      const { client, requests } = streamingClient(key, 600_000);
      const result = await runSync({ client, ...paths });
      expect(result.companies.caughtUp).toBe(true);
      const companyRequests = requests.filter(({ path }) => path.startsWith('/v1/companies'));
      expect(companyRequests).toHaveLength(2);
      // The second from the cursor of a checkpoint the first stream had sent.
      expect(companyRequests[1].path).toMatch(/^\/v1\/companies\/changes\/stream\?cursor=/);
      // Changes after that checkpoint came twice (applied twice, harmlessly); none was lost.
      expect(result.companies.upserts).toBeGreaterThanOrEqual(2_500);
      await expectCopyEqualsSource(t, key, dir);
    }, 60_000);
  });
});

type Kind =
  | 'insertCompany'
  | 'updateCompany'
  | 'renameCompany'
  | 'deleteCompany'
  | 'recreateCompany'
  | 'insertContact'
  | 'updateContact'
  | 'deleteContact'
  | 'moveContact'
  | 'insertLead'
  | 'updateLead'
  | 'deleteLead'
  | 'recreateLead'
  | 'longTransaction';

/** Errors of writers racing each other, which a real writer would retry: the write is dropped. */
const RACES = new Set([
  '23503', // foreign_key_violation: the company was deleted meanwhile
  '23505', // unique_violation: re-created by another writer meanwhile
  '40P01', // deadlock_detected
  '40001', // serialization_failure
]);

/** What the writers know of one workspace (approximately: they race each other). */
class WorkspaceData {
  readonly companies: string[] = [];
  readonly deletedCompanies: string[] = [];
  readonly contacts: string[] = [];
  readonly leads: string[] = [];
  readonly deletedLeads: string[] = [];
  private sequence = 0;

  constructor(
    readonly writers: Writers,
    readonly id: string,
  ) {}

  nextId(prefix: string): string {
    return `${prefix}_${this.id}_w${++this.sequence}`;
  }

  /** `companies` companies with a contact each, and `leads` leads spread over them. */
  async seed(companies: number, leads: number): Promise<void> {
    await this.writers.transaction(null, async (sql) => {
      for (let i = 0; i < companies; i++) await insertCompany(sql, this, this.nextId('co'), i);
      for (let i = 0; i < leads; i++) {
        await insertLead(sql, this, this.nextId('ld'), this.companies[i % companies] ?? '', i);
      }
    });
  }
}

/**
 * Writers of the source, through SQL on their own connections as the customer application would
 * write: each loop draws its next write (seeded), runs it in a transaction, and goes on for its
 * number of writes (or until stopped). Concurrent loops make transactions commit out of their
 * start order.
 */
class Writers {
  static readonly KINDS: Kind[] = [
    'insertCompany',
    'updateCompany',
    'renameCompany',
    'deleteCompany',
    'recreateCompany',
    'insertContact',
    'updateContact',
    'deleteContact',
    'moveContact',
    'insertLead',
    'updateLead',
    'deleteLead',
    'recreateLead',
    'longTransaction',
  ];
  readonly done: Partial<Record<Kind | 'races', number>> = {};
  private stopped = false;

  constructor(private readonly pool: Pool) {}

  workspace(id: string): WorkspaceData {
    return new WorkspaceData(this, id);
  }

  stop(): void {
    this.stopped = true;
  }

  /** `writes` transactions, each of a kind drawn from `kinds` (seeded), 5 to 15 ms apart. */
  async loop(data: WorkspaceData, seed: number, writes: number, kinds: Kind[]): Promise<void> {
    const random = mulberry32(seed);
    for (let i = 0; i < writes && !this.stopped; i++) {
      const kind = kinds[Math.floor(random() * kinds.length)] ?? kinds[0];
      await this.transaction(kind, (sql) => write(kind, sql, data, random));
      await new Promise((resolve) => setTimeout(resolve, 5 + random() * 10));
    }
  }

  /** Runs `body` in a transaction; counts it under `kind` when it committed a change. */
  async transaction(
    kind: Kind | null,
    body: (sql: PoolClient) => Promise<boolean | void>,
  ): Promise<void> {
    const sql = await this.pool.connect();
    try {
      await sql.query('BEGIN');
      const changed = await body(sql);
      await sql.query('COMMIT');
      if (kind && changed) this.done[kind] = (this.done[kind] ?? 0) + 1;
    } catch (error) {
      await sql.query('ROLLBACK');
      if (!RACES.has((error as { code?: string }).code ?? '')) throw error;
      this.done.races = (this.done.races ?? 0) + 1;
    } finally {
      sql.release();
    }
  }
}

/** One write of this kind; resolves to whether it changed a row (the registry may be stale). */
async function write(
  kind: Kind,
  sql: PoolClient,
  data: WorkspaceData,
  random: () => number,
): Promise<boolean> {
  const pick = (ids: string[]) => ids[Math.floor(random() * ids.length)] ?? '';
  const score = () => Math.round(random() * 10_000) / 100;
  const n = Math.floor(random() * 1000);
  const company = pick(data.companies);
  const changed = async (text: string, values: unknown[]) =>
    ((await sql.query(text, values)).rowCount ?? 0) > 0;
  switch (kind) {
    case 'insertCompany':
      return insertCompany(sql, data, data.nextId('co'), n);
    case 'recreateCompany': {
      // The same id again, other values: the copy must hold the new company, not the old one.
      const id = data.deletedCompanies.shift();
      return id !== undefined && insertCompany(sql, data, id, n);
    }
    case 'updateCompany':
      return changed(
        `UPDATE companies SET intent_score = $3, visits_count = visits_count + 1, last_seen = now()
         WHERE workspace_id = $1 AND id = $2`,
        [data.id, company, score()],
      );
    case 'renameCompany': // moves its leads too: they embed the name
      return changed(`UPDATE companies SET name = $3 WHERE workspace_id = $1 AND id = $2`, [
        data.id,
        company,
        `Renamed ${score()}`,
      ]);
    case 'deleteCompany': {
      // Its contacts and leads go with it.
      const deleted = await changed(`DELETE FROM companies WHERE workspace_id = $1 AND id = $2`, [
        data.id,
        company,
      ]);
      if (deleted) {
        data.companies.splice(data.companies.indexOf(company), 1);
        data.deletedCompanies.push(company);
      }
      return deleted;
    }
    case 'insertContact':
      return insertContact(sql, data, company, n);
    case 'updateContact':
      return changed(
        `UPDATE contacts SET email = $3, seniority = $4 WHERE workspace_id = $1 AND id = $2`,
        [data.id, pick(data.contacts), `c${score()}@example.com`, random() < 0.5 ? 'vp' : 'ic'],
      );
    case 'deleteContact':
      return changed(`DELETE FROM contacts WHERE workspace_id = $1 AND id = $2`, [
        data.id,
        pick(data.contacts),
      ]);
    case 'moveContact': // both companies change
      return changed(
        `UPDATE contacts SET company_id = $3
         WHERE workspace_id = $1 AND id = $2 AND company_id <> $3`,
        [data.id, pick(data.contacts), company],
      );
    case 'insertLead':
      return insertLead(sql, data, data.nextId('ld'), company, n);
    case 'recreateLead': {
      const id = data.deletedLeads.shift();
      return id !== undefined && insertLead(sql, data, id, company, n);
    }
    case 'updateLead':
      return changed(
        `UPDATE leads SET intent_score = $3, status = $4 WHERE workspace_id = $1 AND id = $2`,
        [data.id, pick(data.leads), score(), random() < 0.5 ? 'contacted' : 'qualified'],
      );
    case 'deleteLead': {
      const lead = pick(data.leads);
      const deleted = await changed(`DELETE FROM leads WHERE workspace_id = $1 AND id = $2`, [
        data.id,
        lead,
      ]);
      if (deleted) {
        data.leads.splice(data.leads.indexOf(lead), 1);
        data.deletedLeads.push(lead);
      }
      return deleted;
    }
    case 'longTransaction': {
      // Starts before, and commits after, many of the other loops' transactions: the feed must
      // hold their changes back until it ends, then bring them all the same.
      const updated = await changed(
        `UPDATE companies SET intent_score = $3 WHERE workspace_id = $1 AND id = $2`,
        [data.id, company, score()],
      );
      await sql.query(`SELECT pg_sleep($1)`, [0.05 + random() * 0.2]);
      const inserted = await insertLead(sql, data, data.nextId('ld'), pick(data.companies), n);
      return (await insertContact(sql, data, pick(data.companies), n)) || inserted || updated;
    }
  }
}

async function insertCompany(
  sql: PoolClient,
  data: WorkspaceData,
  id: string,
  n: number,
): Promise<boolean> {
  const now = new Date();
  await sql.query(
    ...companyInsert(
      companyRow(data.id, {
        id,
        name: `Company ${n}`,
        domain: `company-${n}.example`,
        intentScore: n / 10,
        firstSeen: now,
        lastSeen: now,
      }),
    ),
  );
  data.companies.push(id);
  await insertContact(sql, data, id, n);
  return true;
}

/** A contact of the company, if it still exists. */
async function insertContact(
  sql: PoolClient,
  data: WorkspaceData,
  companyId: string,
  n: number,
): Promise<boolean> {
  const id = data.nextId('ct');
  const { rowCount } = await sql.query(
    `INSERT INTO contacts (id, workspace_id, company_id, name, job_title, email, phone, linkedin,
       seniority)
     SELECT $1, $2, $3, $4, 'Head of Growth', NULL, NULL, NULL, 'director'
     FROM companies WHERE workspace_id = $2 AND id = $3`,
    [id, data.id, companyId, `Contact ${n}`],
  );
  if (rowCount) data.contacts.push(id);
  return (rowCount ?? 0) > 0;
}

/** A lead of the company, if it still exists. */
async function insertLead(
  sql: PoolClient,
  data: WorkspaceData,
  id: string,
  companyId: string,
  n: number,
): Promise<boolean> {
  const { rowCount } = await sql.query(
    `INSERT INTO leads (id, workspace_id, company_id, contact_name, contact_title, contact_email,
       intent_score, intent_level, signal, recommended_action, status, assigned_to_id, created_at)
     SELECT $1, $2, $3, $4, 'VP Sales', NULL, $5, 'hot', 'Visited the pricing page',
       'Call within 24 hours', 'new', NULL, now()
     FROM companies WHERE workspace_id = $2 AND id = $3`,
    [id, data.id, companyId, `Contact ${n}`, n % 100],
  );
  if (rowCount) data.leads.push(id);
  return (rowCount ?? 0) > 0;
}

/** A small seeded generator: the same draws on every run of the test. */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let x = state;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

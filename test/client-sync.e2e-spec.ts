import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '../clients/typescript/src';
import { runSync } from '../clients/typescript/examples/sync';
import { createTestApp, listening, type TestApp } from './support/app';
import { createTenant } from './support/http';

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
      intentScore: i % 50, // many ties: the order falls back on the id
      intentLevel: 'hot' as const,
      signal: 'Visited the pricing page',
      recommendedAction: 'Call within 24 hours',
      status: 'new' as const,
      createdAt: PAST,
    })),
  });
  return ids;
}

/** The lines the sync wrote: `{type, id, data}` each. */
interface Line {
  type: string;
  id: string;
  data: unknown;
}

/** The lines the sync wrote. */
async function written(file: string): Promise<Line[]> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Line);
}

function countBy(ids: string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const id of ids) counts.set(id, (counts.get(id) ?? 0) + 1);
  return counts;
}

/**
 * A client whose sleeps advance the server's clock (windows end without real time passing), and
 * whose fetch records every request and its status, then runs `afterResponse` (to change data).
 */
function instrumentedClient(
  t: TestApp,
  baseUrl: string,
  apiKey: string,
  afterResponse: (url: URL) => Promise<void> = () => Promise.resolve(),
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
      await afterResponse(url);
      return response;
    },
    sleep: (ms) => {
      sleeps.push(ms);
      t.clock.advance(ms);
      return Promise.resolve();
    },
    now: () => t.clock.now(),
    random: () => 0.5,
  });
  return { client, requests, sleeps };
}

describe('the CRM sync example (clients/typescript/examples/sync.ts)', () => {
  let dir: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'client-sync-'));
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

    it('reads everything exactly once without a single 429, then only what is new', async () => {
      const { workspace, key } = await createTenant(t.prisma);
      const companyIds = await insertCompanies(t, workspace.id, 2900, 0.01);
      const leadIds = await insertLeads(t, workspace.id, companyIds, 2900);
      const stateFile = join(dir, 'state.json');
      const outputFile = join(dir, 'crm.jsonl');
      const now = () => new Date(t.clock.now());
      const first = instrumentedClient(t, baseUrl, key);
      const startedAt = now().toISOString();

      const result = await runSync({ client: first.client, stateFile, outputFile, now });

      expect(result).toEqual({ since: null, nextSince: startedAt, companies: 2900, leads: 2900 });
      const lines = await written(outputFile);
      const companies = lines.filter((line) => line.type === 'company').map((line) => line.id);
      const leads = lines.filter((line) => line.type === 'lead').map((line) => line.id);
      expect([...countBy(companies).values()].every((count) => count === 1)).toBe(true);
      expect(companies.sort()).toEqual(companyIds);
      expect(leads.sort()).toEqual(leadIds);
      // 15 pages of each (14 of 200, one of 100) in 3 windows of 10: the client waited for the
      // reset whenever X-RateLimit-Remaining said 0, so it never spent a request on a 429.
      expect(first.requests).toHaveLength(30);
      expect(first.requests.filter((request) => request.status !== 200)).toEqual([]);
      expect(first.sleeps).toEqual([60_000, 60_000]);
      expect(JSON.parse(await readFile(stateFile, 'utf8'))).toEqual({ since: startedAt });

      t.clock.advance(3_600_000);
      const second = instrumentedClient(t, baseUrl, key);
      const again = await runSync({ client: second.client, stateFile, outputFile, now });

      expect(again).toMatchObject({ since: startedAt, companies: 0, leads: 0 });
      const since = encodeURIComponent(startedAt);
      expect(second.requests).toEqual([
        { path: `/v1/companies?limit=200&offset=0&since=${since}`, status: 200 },
        { path: `/v1/leads?limit=200&offset=0&since=${since}`, status: 200 },
      ]);
      expect(await written(outputFile)).toHaveLength(5800);
      expect(JSON.parse(await readFile(stateFile, 'utf8'))).toEqual({ since: now().toISOString() });
    });
  });

  describe('while the data changes under a long sync', () => {
    let t: TestApp;
    let baseUrl: string;

    beforeAll(async () => {
      t = await createTestApp();
      baseUrl = await listening(t);
    });

    afterAll(async () => {
      await t.close();
    });

    it('may miss a company that moves up a page, and picks it up on the next run', async () => {
      const { workspace, key } = await createTenant(t.prisma);
      const ids = await insertCompanies(t, workspace.id, 600, 0.1); // 3 pages, distinct scores
      const mover = ids[450] ?? '';
      const stateFile = join(dir, 'state.json');
      const outputFile = join(dir, 'crm.jsonl');
      const now = () => new Date(t.clock.now());
      const startedAt = now().toISOString();

      // Once the first page is read, the company on page 3 is visited: it jumps to the top (a page
      // already read) and every company above its old place moves one down.
      const first = instrumentedClient(t, baseUrl, key, async (url) => {
        t.clock.advance(1_000); // reading takes time: the visit is before this run's end
        if (url.pathname !== '/v1/companies' || url.searchParams.get('offset') !== '0') return;
        await t.prisma.company.update({
          where: { id: mover },
          data: { intentScore: 100, intentLevel: 'hot', lastSeen: now() },
        });
      });
      const result = await runSync({ client: first.client, stateFile, outputFile, now });

      const firstRun = countBy((await written(outputFile)).map((line) => line.id));
      expect(result).toMatchObject({ nextSince: startedAt, companies: 600 });
      expect(firstRun.has(mover)).toBe(false); // missed: it moved onto page 1 after page 1 was read
      expect(firstRun.get(ids[199] ?? '')).toBe(2); // and the last of page 1 came again on page 2
      expect(first.requests.filter((request) => request.status !== 200)).toEqual([]);

      t.clock.advance(3_600_000);
      const second = instrumentedClient(t, baseUrl, key);
      const next = await runSync({ client: second.client, stateFile, outputFile, now });

      // Its visit happened after the first run's recorded start: the next run has it.
      expect(next).toMatchObject({ since: startedAt, companies: 1, leads: 0 });
      const lines = await written(outputFile);
      expect(lines).toHaveLength(601); // 600 lines of the first run (one missed, one twice)
      expect(lines.slice(600)).toEqual([
        { type: 'company', id: mover, data: expect.objectContaining({ intentScore: 100 }) },
      ]);
    });

    it('saves no new since when the run fails, so the next run reads the same again', async () => {
      const { workspace, key } = await createTenant(t.prisma);
      await insertCompanies(t, workspace.id, 3, 1);
      const stateFile = join(dir, 'state.json');
      const outputFile = join(dir, 'crm.jsonl');
      const now = () => new Date(t.clock.now());
      const revoked = new Client({ apiKey: 'st_revoked', baseUrl });

      await expect(runSync({ client: revoked, stateFile, outputFile, now })).rejects.toThrow(
        '401 UNAUTHORIZED',
      );
      await expect(readFile(stateFile, 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });

      const { client } = instrumentedClient(t, baseUrl, key);
      await expect(runSync({ client, stateFile, outputFile, now })).resolves.toMatchObject({
        since: null,
        companies: 3,
      });
    });
  });
});

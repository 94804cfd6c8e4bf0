import { createTestApp, type TestApp } from '../../support/app';
import { createTenant, getWithKey } from '../../support/http';

/*
 * The comparison docs/using-the-api.md quotes: a CRM sync of 2,000 companies while the source deletes some
 * and lets the scores of others decay, once with the lists' offset recipe and once with the change
 * feed, interleaved page by page on the same data. The figures are printed and pinned: the recipe
 * ends with companies missing or stale and deleted ones still held; the feed ends exact.
 */

const COMPANIES = 2_000;
const PAGE = 200;

/** A small deterministic generator (mulberry32): the same scenario on every run. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let value = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    value = (value + Math.imul(value ^ (value >>> 7), 61 | value)) ^ value;
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

describe('change feed versus the offset recipe', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ env: { RATE_LIMIT_PER_MINUTE: '1000000' } });
  });

  afterAll(async () => {
    await t.close();
  });

  it('the recipe loses companies while the data moves; the feed loses none', async () => {
    const { workspace, key } = await createTenant(t.prisma);
    await t.prisma.$executeRaw`
      INSERT INTO companies (id, workspace_id, name, domain, industry, size, country, city,
        revenue, intent_score, intent_level, icp_score, commercial_score, crm_status, visits_count,
        first_seen, last_seen)
      SELECT 'co_' || lpad(n::text, 5, '0'), ${workspace.id}, 'Company ' || n, 'c.example',
        'Software', '51-200', 'France', 'Lyon', '1M-10M', (n * 7919 % 1000) / 10.0, 'warm', 50, 50,
        'new', 1, timestamptz '2026-02-01', timestamptz '2026-02-20'
      FROM generate_series(1, ${COMPANIES}) n`;

    const next = random(42);
    const live = Array.from(
      { length: COMPANIES },
      (_, i) => `co_${String(i + 1).padStart(5, '0')}`,
    );
    const take = () => live.splice(Math.floor(next() * live.length), 1)[0];
    let deleted = 0;
    let decayed = 0;
    /** Between two pages: 3 deletions and 3 scores halved (no visit: `lastSeen` stays). */
    async function theSourceMoves(): Promise<void> {
      for (let i = 0; i < 3; i++) {
        await t.prisma.$executeRaw`DELETE FROM companies WHERE id = ${take()}`;
        deleted++;
        const id = live[Math.floor(next() * live.length)];
        await t.prisma
          .$executeRaw`UPDATE companies SET intent_score = intent_score / 2 WHERE id = ${id}`;
        decayed++;
      }
    }

    const recipe = new Map<string, unknown>();
    const feed = new Map<string, unknown>();
    let cursor: string | undefined;
    const started = new Date().toISOString();
    let total = Infinity;
    for (let offset = 0; offset < total; offset += PAGE) {
      const list = await getWithKey(t.app, `/v1/companies?limit=${PAGE}&offset=${offset}`, key);
      total = list.body.total as number;
      for (const company of list.body.data as { id: string }[]) recipe.set(company.id, company);

      const query = `?limit=${PAGE}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const changes = await getWithKey(t.app, `/v1/companies/changes${query}`, key);
      for (const change of changes.body.data as { op: string; id: string; company?: unknown }[]) {
        if (change.op === 'delete') feed.delete(change.id);
        else feed.set(change.id, change.company);
      }
      cursor = changes.body.nextCursor as string;
      await theSourceMoves();
    }
    // The recipe's next pass: what was seen since this one started (nothing was visited).
    const since = await getWithKey(
      t.app,
      `/v1/companies?limit=${PAGE}&since=${encodeURIComponent(started)}`,
      key,
    );
    for (const company of since.body.data as { id: string }[]) recipe.set(company.id, company);
    // The feed client's next polls, to `hasMore: false`.
    for (let more = true; more;) {
      const changes = await getWithKey(
        t.app,
        `/v1/companies/changes?limit=1000&cursor=${encodeURIComponent(cursor ?? '')}`,
        key,
      );
      for (const change of changes.body.data as { op: string; id: string; company?: unknown }[]) {
        if (change.op === 'delete') feed.delete(change.id);
        else feed.set(change.id, change.company);
      }
      cursor = changes.body.nextCursor as string;
      more = changes.body.hasMore as boolean;
    }

    const source = new Map<string, unknown>();
    for (let offset = 0; offset < live.length; offset += PAGE) {
      const list = await getWithKey(t.app, `/v1/companies?limit=${PAGE}&offset=${offset}`, key);
      for (const company of list.body.data as { id: string }[]) source.set(company.id, company);
    }
    expect(source.size).toBe(live.length);

    const differs = (copy: Map<string, unknown>) => {
      const same = (id: string) => JSON.stringify(copy.get(id)) === JSON.stringify(source.get(id));
      return {
        missing: [...source.keys()].filter((id) => !copy.has(id)).length,
        stale: [...source.keys()].filter((id) => copy.has(id) && !same(id)).length,
        deletedStillHeld: [...copy.keys()].filter((id) => !source.has(id)).length,
      };
    };
    const lost = { recipe: differs(recipe), feed: differs(feed) };
    expect(lost.feed).toEqual({ missing: 0, stale: 0, deletedStillHeld: 0 });
    // The scenario is deterministic: these are the figures docs/using-the-api.md quotes.
    expect({ deleted, decayed }).toEqual({ deleted: 30, decayed: 30 });
    expect(lost.recipe).toEqual({ missing: 22, stale: 10, deletedStillHeld: 16 });
    expect([...feed.keys()].sort()).toEqual([...source.keys()].sort());
  });
});

import fc from 'fast-check';
import { createTestApp, type TestApp } from '../../support/app';
import { createApiKey, createCompany, createLead, createWorkspace } from '../../support/factories';
import { propertyOptions } from '../../support/fast-check';
import {
  BASE_TIME,
  byteOrder,
  type GeneratedRow,
  rows,
  runTag,
  sinceAround,
} from '../../support/generated-data';
import { getWithKey } from '../../support/http';

/*
 * Generated data sets and page sizes: reading a list page by page, until `offset` reaches
 * `total`, gives every matching item exactly once, in the contract's order (intentScore
 * descending, then id ascending by byte order), and as many as `total` says.
 */
const RUNS = 40;
const LISTS = ['/v1/companies', '/v1/leads'] as const;

let t: TestApp;

beforeAll(async () => {
  // Paging by one item takes many requests of one key.
  t = await createTestApp({ env: { RATE_LIMIT_PER_MINUTE: '1000000' } });
});

afterAll(async () => {
  await t.close();
});

interface Written {
  key: string;
  /** Per list, the rows written, with their ids. */
  items: Record<(typeof LISTS)[number], { id: string; score: number; at: Date }[]>;
}

/** A workspace holding the rows as companies and, on one host company, as leads. */
async function write(data: GeneratedRow[]): Promise<Written> {
  const tag = runTag();
  const workspace = await createWorkspace(t.prisma);
  const { key } = await createApiKey(t.prisma, workspace.id);
  const items: Written['items'] = { '/v1/companies': [], '/v1/leads': [] };
  await Promise.all(
    data.map(async ({ suffix, score, at }) => {
      const company = await createCompany(t.prisma, workspace.id, {
        id: `${tag}${suffix}`,
        intentScore: score,
        lastSeen: new Date(BASE_TIME + at),
      });
      items['/v1/companies'].push({ id: company.id, score, at: company.lastSeen });
    }),
  );
  const host = await createCompany(t.prisma, workspace.id, {
    id: `${tag}host`,
    lastSeen: new Date(0),
  });
  await Promise.all(
    data.map(async ({ suffix, score, at }) => {
      const lead = await createLead(t.prisma, host, {
        id: `${tag}${suffix}`,
        intentScore: score,
        createdAt: new Date(BASE_TIME + at),
      });
      items['/v1/leads'].push({ id: lead.id, score, at: lead.createdAt });
    }),
  );
  // The host company is an item of the companies list like any other.
  items['/v1/companies'].push({ id: host.id, score: host.intentScore, at: host.lastSeen });
  return { key, items };
}

/** Every page of a list, until `offset` reaches `total`: the ids in the order served. */
async function readAllPages(list: string, key: string, pageSize: number, since?: Date) {
  const ids: string[] = [];
  const totals = new Set<number>();
  let total = Infinity;
  for (let offset = 0; offset < total; offset += pageSize) {
    const query = `limit=${pageSize}&offset=${offset}${since ? `&since=${since.toISOString()}` : ''}`;
    const response = await getWithKey(t.app, `${list}?${query}`, key);
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ limit: pageSize, offset });
    total = response.body.total as number;
    totals.add(total);
    const page = (response.body.data as { id: string }[]).map((item) => item.id);
    expect(page.length).toBe(Math.max(0, Math.min(pageSize, total - offset)));
    ids.push(...page);
  }
  return { ids, totals: [...totals], total };
}

const pageSize = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: 1, max: 7 }) },
  { weight: 1, arbitrary: fc.integer({ min: 8, max: 200 }) },
);

async function checkEveryList(data: GeneratedRow[], size: number, since?: Date) {
  const { key, items } = await write(data);
  for (const list of LISTS) {
    const expected = items[list]
      .filter((item) => !since || item.at >= since)
      .sort((a, b) => b.score - a.score || byteOrder(a.id, b.id))
      .map((item) => item.id);

    const { ids, totals, total } = await readAllPages(list, key, size, since);

    expect(ids).toStrictEqual(expected);
    expect(new Set(ids).size).toBe(ids.length);
    expect(totals).toStrictEqual([total]);
    expect(total).toBe(expected.length);
  }
}

describe('both lists, read page by page', () => {
  it('concatenated pages: every item once, in the contract order, as many as total', async () => {
    await fc.assert(
      fc.asyncProperty(rows(25), pageSize, async (data, size) => {
        await checkEveryList(data, size);
      }),
      propertyOptions(RUNS),
    );
  }, 300_000);

  it('the same with since (inclusive): every item at or after it, and only those', async () => {
    await fc.assert(
      fc.asyncProperty(
        rows(25).chain((data) => fc.tuple(fc.constant(data), pageSize, sinceAround(data))),
        async ([data, size, since]) => {
          await checkEveryList(data, size, since);
        },
      ),
      propertyOptions(RUNS),
    );
  }, 300_000);
});

import fc from 'fast-check';
import type { Company, Lead } from '../../../src/generated/prisma/client';
import { createTestApp, type TestApp } from '../../support/app';
import { createApiKey, createCompany, createLead, createWorkspace } from '../../support/factories';
import { propertyOptions } from '../../support/fast-check';
import { byteOrder, runTag, score } from '../../support/generated-data';
import { expectValidationError, getWithKey } from '../../support/http';

/*
 * The lists' filters (docs/api.md, "Filters"): over generated data and generated combinations of
 * filters, reading a filtered list page by page gives every matching item exactly once, in the
 * contract's order, as many as `total` says, and nothing of another workspace; a value that is no
 * value of its filter is a 400 naming the parameter and the value.
 */
const RUNS = 30;

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({ env: { RATE_LIMIT_PER_MINUTE: '1000000' } });
});

afterAll(async () => {
  await t.close();
});

const INTENT_LEVELS = ['hot', 'warm', 'cold'] as const;
const CRM_STATUSES = ['new', 'qualified', 'in_crm', 'contacted', 'won', 'lost'] as const;
const LEAD_STATUSES = ['new', 'contacted', 'qualified', 'converted', 'dismissed'] as const;
// Few countries and assignees, with case and accents, so that exact matching is exercised.
const COUNTRIES = ['France', 'france', 'Côte d’Ivoire', 'Germany'] as const;
const ASSIGNEES = [null, 'usr_1', 'usr_2', 'USR_1'] as const;

interface Item {
  id: string;
  intentScore: number;
  intentLevel: string;
  crmStatus?: string;
  country?: string;
  status?: string;
  assignedToId?: string | null;
}

const companyRow = fc.record({
  intentScore: score,
  intentLevel: fc.constantFrom(...INTENT_LEVELS),
  crmStatus: fc.constantFrom(...CRM_STATUSES),
  country: fc.constantFrom(...COUNTRIES),
});
const leadRow = fc.record({
  intentScore: score,
  intentLevel: fc.constantFrom(...INTENT_LEVELS),
  status: fc.constantFrom(...LEAD_STATUSES),
  assignedToId: fc.constantFrom(...ASSIGNEES),
});

const someOf = <T>(values: readonly T[]) =>
  fc.uniqueArray(fc.constantFrom(...values), { minLength: 1, maxLength: values.length });
const bound = fc.oneof(score, fc.constantFrom(0, 100, 50.5));

const companyFilters = fc.record(
  {
    intentLevel: someOf(INTENT_LEVELS),
    crmStatus: someOf(CRM_STATUSES),
    minIntentScore: bound,
    country: fc.constantFrom(...COUNTRIES, 'Spain'),
  },
  { requiredKeys: [] },
);
const leadFilters = fc.record(
  {
    intentLevel: someOf(INTENT_LEVELS),
    status: someOf(LEAD_STATUSES),
    minIntentScore: bound,
    assignedToId: fc.constantFrom('usr_1', 'usr_2', 'usr_3'),
  },
  { requiredKeys: [] },
);

type Filters = Record<string, string[] | number | string | undefined>;

/** Whether an item passes the filters, as docs/api.md defines them. */
function matches(item: Item, filters: Filters): boolean {
  return Object.entries(filters).every(([name, value]) => {
    if (value === undefined) return true;
    if (name === 'minIntentScore') return item.intentScore >= (value as number);
    if (Array.isArray(value)) return value.includes(item[name as keyof Item] as string);
    return item[name as keyof Item] === value;
  });
}

function queryOf(filters: Filters): string {
  return Object.entries(filters)
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) =>
      Array.isArray(value)
        ? `${name}=${value.map(encodeURIComponent).join(',')}`
        : `${name}=${encodeURIComponent(String(value))}`,
    )
    .join('&');
}

async function readAllPages(path: string, key: string, filters: Filters, pageSize: number) {
  const ids: string[] = [];
  const totals = new Set<number>();
  let total = Infinity;
  for (let offset = 0; offset < total; offset += pageSize) {
    const response = await getWithKey(
      t.app,
      `${path}?${queryOf(filters)}&limit=${pageSize}&offset=${offset}`,
      key,
    );
    expect(response.status).toBe(200);
    total = response.body.total as number;
    totals.add(total);
    ids.push(...(response.body.data as { id: string }[]).map((item) => item.id));
  }
  return { ids, totals: [...totals] };
}

function expectedIds(items: Item[], filters: Filters): string[] {
  return items
    .filter((item) => matches(item, filters))
    .sort((a, b) => b.intentScore - a.intentScore || byteOrder(a.id, b.id))
    .map((item) => item.id);
}

const pageSize = fc.oneof(fc.integer({ min: 1, max: 5 }), fc.integer({ min: 6, max: 200 }));

/** A second workspace holding an item that passes every filter: it must never be served. */
let foreign: { company: Company; lead: Lead };
beforeAll(async () => {
  const other = await createWorkspace(t.prisma);
  const company = await createCompany(t.prisma, other.id, { intentScore: 100 });
  const lead = await createLead(t.prisma, company, { intentScore: 100, assignedToId: 'usr_1' });
  foreign = { company, lead };
});

describe('filtered lists, read page by page', () => {
  it('companies: every matching item once, in order, as many as total, none of another workspace', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(companyRow, { maxLength: 25 }),
        companyFilters,
        pageSize,
        async (rows, filters, size) => {
          const tag = runTag();
          const workspace = await createWorkspace(t.prisma);
          const { key } = await createApiKey(t.prisma, workspace.id);
          const items: Item[] = await Promise.all(
            rows.map((row, i) =>
              createCompany(t.prisma, workspace.id, { id: `${tag}${i}`, ...row }),
            ),
          );
          const { ids, totals } = await readAllPages('/v1/companies', key, filters, size);
          const expected = expectedIds(items, filters);
          expect(ids).toStrictEqual(expected);
          expect(totals).toStrictEqual([expected.length]);
          expect(ids).not.toContain(foreign.company.id);
        },
      ),
      propertyOptions(RUNS),
    );
  }, 300_000);

  it('leads: every matching item once, in order, as many as total, none of another workspace', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(leadRow, { maxLength: 25 }),
        leadFilters,
        pageSize,
        async (rows, filters, size) => {
          const tag = runTag();
          const workspace = await createWorkspace(t.prisma);
          const { key } = await createApiKey(t.prisma, workspace.id);
          const host = await createCompany(t.prisma, workspace.id, { id: `${tag}host` });
          const items: Item[] = await Promise.all(
            rows.map((row, i) => createLead(t.prisma, host, { id: `${tag}${i}`, ...row })),
          );
          const { ids, totals } = await readAllPages('/v1/leads', key, filters, size);
          const expected = expectedIds(items, filters);
          expect(ids).toStrictEqual(expected);
          expect(totals).toStrictEqual([expected.length]);
          expect(ids).not.toContain(foreign.lead.id);
        },
      ),
      propertyOptions(RUNS),
    );
  }, 300_000);
});

describe('the forms a filter accepts', () => {
  let key: string;
  let hot: Company;
  let cold: Company;

  beforeAll(async () => {
    const workspace = await createWorkspace(t.prisma);
    ({ key } = await createApiKey(t.prisma, workspace.id));
    hot = await createCompany(t.prisma, workspace.id, {
      intentLevel: 'hot',
      intentScore: 90,
      lastSeen: new Date('2026-03-02T00:00:00Z'),
    });
    cold = await createCompany(t.prisma, workspace.id, {
      intentLevel: 'cold',
      intentScore: 10,
      lastSeen: new Date('2026-03-01T00:00:00Z'),
    });
    await createCompany(t.prisma, workspace.id, { intentLevel: 'warm', intentScore: 50 });
  });

  const idsOf = async (query: string) => {
    const response = await getWithKey(t.app, `/v1/companies?${query}`, key);
    expect(response.status).toBe(200);
    return (response.body.data as { id: string }[]).map((item) => item.id);
  };

  it('takes several values comma-separated, with spaces around them, or the parameter repeated', async () => {
    expect(await idsOf('intentLevel=hot,cold')).toEqual([hot.id, cold.id]);
    expect(await idsOf('intentLevel=hot,%20cold')).toEqual([hot.id, cold.id]);
    expect(await idsOf('intentLevel=hot&intentLevel=cold')).toEqual([hot.id, cold.id]);
    expect(await idsOf('intentLevel=cold,cold')).toEqual([cold.id]);
  });

  it('minIntentScore is inclusive and takes decimals', async () => {
    expect(await idsOf('minIntentScore=90')).toEqual([hot.id]);
    expect(await idsOf('minIntentScore=90.0001')).toEqual([]);
    expect((await idsOf('minIntentScore=0')).length).toBe(3);
  });

  it('combines with since (AND), and its total counts the filtered set', async () => {
    const response = await getWithKey(
      t.app,
      '/v1/companies?intentLevel=hot,cold&since=2026-03-01T12:00:00Z',
      key,
    );
    expect(response.body).toMatchObject({ total: 1, data: [{ id: hot.id }] });
  });

  it.each([
    ['intentLevel=lukewarm', 'intentLevel has an unknown value "lukewarm"'],
    ['intentLevel=hot,Hot', 'intentLevel has an unknown value "Hot"'],
    ['intentLevel=', 'intentLevel has an empty value'],
    ['intentLevel=hot,', 'intentLevel has an empty value'],
    ['crmStatus=in-crm', 'crmStatus has an unknown value "in-crm"'],
    ['minIntentScore=abc', 'minIntentScore has an invalid value "abc"'],
    ['minIntentScore=101', 'minIntentScore has an invalid value "101"'],
    ['minIntentScore=-1', 'minIntentScore has an invalid value "-1"'],
    ['minIntentScore=1e2', 'minIntentScore has an invalid value "1e2"'],
    ['minIntentScore=', 'minIntentScore has an invalid value ""'],
    ['minIntentScore=1&minIntentScore=2', 'minIntentScore must be given only once'],
    ['country=', 'country has an invalid value ""'],
    ['country=a%00b', 'country has an invalid value "a\\u0000b"'],
    [`country=${'x'.repeat(101)}`, 'country has an invalid value "xxxxxxxx'],
    ['country=France&country=Spain', 'country must be given only once'],
  ])('%s is a 400 naming the parameter and the value', async (query, message) => {
    const response = await getWithKey(t.app, `/v1/companies?${query}`, key);
    const messages = expectValidationError(response, `/v1/companies?${query}`);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toContain(message);
  });

  it("names the accepted values in an enumeration's message", async () => {
    const response = await getWithKey(t.app, '/v1/leads?status=open', key);
    expect(expectValidationError(response, '/v1/leads?status=open')).toEqual([
      'status has an unknown value "open": give one or more of new, contacted, qualified, ' +
        'converted, dismissed, comma-separated',
    ]);
  });

  it("refuses one list's filters on the other", async () => {
    for (const path of ['/v1/companies?status=new', '/v1/leads?crmStatus=new']) {
      const response = await getWithKey(t.app, path, key);
      expect(response.status).toBe(400);
    }
  });
});

import request from 'supertest';
import { createTestApp, type TestApp } from '../../support/app';
import {
  createApiKey,
  createCompany,
  createContact,
  createLead,
  createWorkspace,
} from '../../support/factories';

/*
 * Two workspaces that look alike: companies of the same names and domains, contacts and leads of
 * the same names, scores interleaved (and some equal) so that a query that forgot the workspace
 * would mix them on every page, and dates spread so that `since` cuts through both.
 */
interface Tenant {
  label: 'A' | 'B';
  workspace: { id: string; name: string; plan: string };
  key: string;
  companyIds: Set<string>;
  contactIds: Set<string>;
  leadIds: Set<string>;
  companies: { id: string; lastSeen: Date }[];
  leads: { id: string; createdAt: Date }[];
}

/** What the tests read of a company or a lead. */
interface Item {
  id: string;
  companyId?: string;
  contacts?: { id: string }[];
}

const COMPANIES = 9;
const SINCE: [string, string | undefined][] = [
  ['without since', undefined],
  ['since 2026-02-05T00:00:00Z', '2026-02-05T00:00:00Z'],
  ['since 2026-02-08 (a date)', '2026-02-08'],
  ['since after everything', '2026-03-01T00:00:00Z'],
];
const LIMITS = [1, 2, 4, 200];

let t: TestApp;
let tenants: Record<'A' | 'B', Tenant>;

async function createTenant(label: 'A' | 'B', scoreShift: number): Promise<Tenant> {
  const workspace = await createWorkspace(t.prisma, { name: `Workspace ${label}`, plan: 'growth' });
  const tenant: Tenant = {
    label,
    workspace: { id: workspace.id, name: workspace.name, plan: workspace.plan },
    key: (await createApiKey(t.prisma, workspace.id)).key,
    companyIds: new Set(),
    contactIds: new Set(),
    leadIds: new Set(),
    companies: [],
    leads: [],
  };
  for (let i = 0; i < COMPANIES; i++) {
    // A: 90, 80, 70...; B: 85, 75, 65... and every third one equal across both.
    const score = i % 3 === 0 ? 90 - i * 10 : 90 - i * 10 - scoreShift;
    const day = String(1 + i).padStart(2, '0');
    const company = await createCompany(t.prisma, workspace.id, {
      name: `Shared Name ${i}`,
      domain: `shared-${i}.example`,
      intentScore: score,
      lastSeen: new Date(`2026-02-${day}T12:00:00.000Z`),
    });
    tenant.companyIds.add(company.id);
    tenant.companies.push(company);
    for (const name of ['Alice Martin', 'Bob Durand']) {
      const contact = await createContact(t.prisma, company, { name });
      tenant.contactIds.add(contact.id);
    }
    const lead = await createLead(t.prisma, company, {
      contactName: 'Alice Martin',
      intentScore: score,
      createdAt: new Date(`2026-02-${day}T08:00:00.000Z`),
    });
    tenant.leadIds.add(lead.id);
    tenant.leads.push(lead);
  }
  return tenant;
}

beforeAll(async () => {
  // Isolation is the subject here, not the rate limit: the paging below takes many requests.
  t = await createTestApp({ env: { RATE_LIMIT_PER_MINUTE: '100000' } });
  tenants = { A: await createTenant('A', 0), B: await createTenant('B', 5) };
});

afterAll(async () => {
  await t.close();
});

/** A page of a list, or the workspace of /v1/me. */
interface Body {
  total: number;
  data: Item[];
}

async function get<T = Body>(
  tenant: Tenant,
  path: string,
  query: Record<string, string | number> = {},
): Promise<T> {
  const response = await request(t.app.getHttpServer())
    .get(path)
    .query(query)
    .set('Authorization', `Bearer ${tenant.key}`);
  expect(response.status).toBe(200);
  return response.body as T;
}

/** Every item of a list, page by page, with the `total` of each page. */
async function pageThrough(
  tenant: Tenant,
  path: string,
  limit: number,
  since: string | undefined,
): Promise<{ items: Item[]; totals: number[] }> {
  const items: Item[] = [];
  const totals: number[] = [];
  for (let offset = 0; ; offset += limit) {
    const page = await get(tenant, path, { limit, offset, ...(since && { since }) });
    totals.push(page.total);
    items.push(...page.data);
    if (page.data.length < limit) return { items, totals };
  }
}

const expectedIds = <T extends { id: string }>(rows: T[], keep: (row: T) => boolean) =>
  rows
    .filter(keep)
    .map((row) => row.id)
    .sort();

describe.each(['A', 'B'] as const)('with the key of workspace %s', (label) => {
  const own = () => tenants[label];
  const other = () => tenants[label === 'A' ? 'B' : 'A'];

  it('GET /v1/me names its own workspace', async () => {
    expect(await get<Tenant['workspace']>(own(), '/v1/me')).toEqual(own().workspace);
  });

  describe.each(SINCE)('%s', (_label, since) => {
    const from = since ? Date.parse(since) : -Infinity;

    it.each(LIMITS)('companies, %i a page: all its own, none of the other', async (limit) => {
      const { items, totals } = await pageThrough(own(), '/v1/companies', limit, since);
      const ids = items.map((company) => company.id);
      const contactIds = items.flatMap((company) =>
        (company.contacts ?? []).map((contact) => contact.id),
      );

      expect(ids.filter((id) => other().companyIds.has(id))).toEqual([]);
      expect(contactIds.filter((id) => other().contactIds.has(id))).toEqual([]);
      expect(contactIds.every((id) => own().contactIds.has(id))).toBe(true);
      expect([...ids].sort()).toEqual(
        expectedIds(own().companies, (company) => company.lastSeen.getTime() >= from),
      );
      expect(new Set(totals)).toEqual(new Set([ids.length]));
    });

    it.each(LIMITS)('leads, %i a page: all its own, none of the other', async (limit) => {
      const { items, totals } = await pageThrough(own(), '/v1/leads', limit, since);
      const ids = items.map((lead) => lead.id);

      expect(ids.filter((id) => other().leadIds.has(id))).toEqual([]);
      expect(items.filter((lead) => !own().companyIds.has(lead.companyId ?? ''))).toEqual([]);
      expect([...ids].sort()).toEqual(
        expectedIds(own().leads, (lead) => lead.createdAt.getTime() >= from),
      );
      expect(new Set(totals)).toEqual(new Set([ids.length]));
    });
  });

  it.each([
    ['/v1/companies', 0, 1],
    ['/v1/companies', 3, 2],
    ['/v1/companies', 8, 5],
    ['/v1/companies', COMPANIES, 10],
    ['/v1/companies', 2 * COMPANIES - 1, 10],
    ['/v1/leads', 4, 3],
    ['/v1/leads', COMPANIES, 50],
    ['/v1/leads', 2 * COMPANIES, 200],
  ])('%s at offset %i, limit %i: only its own, and its own total', async (path, offset, limit) => {
    const tenant = own();
    const page = await get(tenant, path, { offset, limit });
    const ids = page.data.map((item) => item.id);
    const ownIds = path === '/v1/companies' ? tenant.companyIds : tenant.leadIds;

    expect(page.total).toBe(COMPANIES);
    expect(ids.every((id) => ownIds.has(id))).toBe(true);
    expect(ids).toHaveLength(Math.max(0, Math.min(limit, COMPANIES - offset)));
  });
});

it('the two workspaces do hold look-alike data (the premise of the tests above)', async () => {
  type Companies = { data: { id: string; name: string; domain: string }[] };
  const a = await get<Companies>(tenants.A, '/v1/companies', { limit: 200 });
  const b = await get<Companies>(tenants.B, '/v1/companies', { limit: 200 });
  const namesAndDomains = (page: Companies) =>
    page.data.map((company) => `${company.name} ${company.domain}`).sort();
  const ids = (page: Companies) => page.data.map((company) => company.id);

  expect(namesAndDomains(a)).toEqual(namesAndDomains(b));
  expect(ids(a).filter((id) => ids(b).includes(id))).toEqual([]);
  expect(await t.prisma.company.count()).toBe(2 * COMPANIES);
});

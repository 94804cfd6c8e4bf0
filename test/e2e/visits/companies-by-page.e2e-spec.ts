import type { Company, Workspace } from '../../../src/generated/prisma/client';
import { createTestApp, type TestApp } from '../../support/app';
import {
  createApiKey,
  createCompany,
  createContact,
  createVisit,
  daysAgo,
} from '../../support/factories';
import {
  createTenant,
  expectErrorEnvelope,
  expectValidationError,
  getWithKey,
} from '../../support/http';
import { restricted } from '../../support/selected-fields';

/*
 * The companies by the pages they viewed (docs/visits.md, "Companies by the pages they viewed"):
 * `visitedPage` and `visitedSince` on GET /v1/companies keep the companies with a matching page
 * view in the window, with an exact total, combined with every other filter, fields and offset
 * paging; their refusals, the visits:read scope they need, and an ETag made from the body.
 */

type Json = Record<string, unknown>;

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({ env: { RATE_LIMIT_PER_MINUTE: '1000000' } });
});

afterAll(async () => {
  await t.close();
});

const get = (key: string, path: string) => getWithKey(t.app, path, key);

const HOUR = 60 * 60 * 1000;

interface Row {
  suffix: string;
  intentScore: number;
  intentLevel: 'hot' | 'warm' | 'cold';
  crmStatus: 'new' | 'qualified' | 'in_crm' | 'lost';
  country: string;
  domain: string;
  name: string;
  lastSeen: string;
  /** Whether the company viewed /pricing two days ago (else /blog, then). */
  viewedPricing: boolean;
}

// prettier-ignore
const ROWS: Row[] = [
  { suffix: 'a', intentScore: 95, intentLevel: 'hot', crmStatus: 'new', country: 'France', domain: 'alpha.example', name: 'Alpha Corp', lastSeen: '2026-11-20T00:00:00.000Z', viewedPricing: true },
  { suffix: 'b', intentScore: 90, intentLevel: 'hot', crmStatus: 'in_crm', country: 'Germany', domain: 'beta.example', name: 'Beta GmbH', lastSeen: '2026-10-01T00:00:00.000Z', viewedPricing: true },
  { suffix: 'c', intentScore: 80, intentLevel: 'warm', crmStatus: 'new', country: 'France', domain: 'gamma.example', name: 'Gamma Data', lastSeen: '2026-11-25T00:00:00.000Z', viewedPricing: false },
  { suffix: 'd', intentScore: 70, intentLevel: 'warm', crmStatus: 'qualified', country: 'France', domain: 'delta.example', name: 'Delta Data', lastSeen: '2026-11-28T00:00:00.000Z', viewedPricing: true },
  { suffix: 'e', intentScore: 60, intentLevel: 'cold', crmStatus: 'new', country: 'Spain', domain: 'www.Epsilon.example', name: 'Epsilon', lastSeen: '2026-11-01T00:00:00.000Z', viewedPricing: true },
  { suffix: 'f', intentScore: 95, intentLevel: 'hot', crmStatus: 'new', country: 'France', domain: 'phi.example', name: 'Phi Data', lastSeen: '2026-11-29T00:00:00.000Z', viewedPricing: false },
  { suffix: 'g', intentScore: 50, intentLevel: 'hot', crmStatus: 'lost', country: 'France', domain: 'alpha-two.example', name: 'Alpha Two', lastSeen: '2026-11-29T00:00:00.000Z', viewedPricing: true },
  { suffix: 'h', intentScore: 95, intentLevel: 'hot', crmStatus: 'new', country: 'France', domain: 'eta.example', name: 'Eta', lastSeen: '2026-11-29T00:00:00.000Z', viewedPricing: true },
];

/** The suffixes of the rows that pass, in the list's order: intentScore descending, then id. */
const expected = (keep: (row: Row) => boolean) =>
  ROWS.filter(keep)
    .sort((x, y) => y.intentScore - x.intentScore || (x.suffix < y.suffix ? -1 : 1))
    .map((row) => row.suffix);

const suffixes = (workspace: Workspace, data: Json[]) =>
  data.map(({ id }) => (id as string).slice(workspace.id.length + 1));

/** The companies of ROWS, each with a visit two days ago, to /pricing or to /blog. */
async function seedRows(): Promise<{ workspace: Workspace; key: string }> {
  const tenant = await createTenant(t.prisma);
  for (const row of ROWS) {
    const company = await createCompany(t.prisma, tenant.workspace.id, {
      id: `${tenant.workspace.id}-${row.suffix}`,
      intentScore: row.intentScore,
      intentLevel: row.intentLevel,
      crmStatus: row.crmStatus,
      country: row.country,
      domain: row.domain,
      name: row.name,
      lastSeen: new Date(row.lastSeen),
    });
    await createContact(t.prisma, company);
    // Two visits of a matching company, two matching pages in one: it comes once.
    const path = row.viewedPricing ? '/pricing' : '/blog';
    await createVisit(t.prisma, company, {
      startedAt: daysAgo(2),
      pages: [{ path }, { path: '/' }, { path }],
    });
    await createVisit(t.prisma, company, { startedAt: daysAgo(3), pages: [{ path }] });
  }
  return tenant;
}

describe('visitedPage', () => {
  let tenant: { workspace: Workspace; key: string };

  beforeAll(async () => {
    tenant = await seedRows();
  });

  const listed = async (query: string) => {
    const response = await get(tenant.key, `/v1/companies?${query}`);
    expect(response.status).toBe(200);
    return {
      ids: suffixes(tenant.workspace, response.body.data as Json[]),
      total: response.body.total as number,
    };
  };

  it('keeps the companies that viewed a matching page, each once, with the exact total', async () => {
    const viewed = expected((row) => row.viewedPricing);

    for (const pattern of ['/pricing', '/pric*', '/pricing,/nowhere']) {
      expect(await listed(`visitedPage=${pattern}`)).toStrictEqual({
        ids: viewed,
        total: viewed.length,
      });
    }
    const blog = expected((row) => !row.viewedPricing);
    expect(await listed('visitedPage=/blog')).toStrictEqual({ ids: blog, total: blog.length });
    expect(await listed('visitedPage=/*')).toStrictEqual({
      ids: expected(() => true),
      total: ROWS.length,
    });
    expect(await listed('visitedPage=/Pricing')).toStrictEqual({ ids: [], total: 0 });
    expect(await listed('visitedPage=/pricing/*')).toStrictEqual({ ids: [], total: 0 });
  });

  it.each<[string, (row: Row) => boolean]>([
    ['intentLevel=hot', (row) => row.intentLevel === 'hot'],
    ['intentLevel=warm,cold', (row) => row.intentLevel !== 'hot'],
    ['crmStatus=new,qualified', (row) => ['new', 'qualified'].includes(row.crmStatus)],
    ['minIntentScore=70', (row) => row.intentScore >= 70],
    ['minIntentScore=90.5', (row) => row.intentScore >= 90.5],
    ['country=France', (row) => row.country === 'France'],
    ['domain=epsilon.example', (row) => row.suffix === 'e'],
    ['domain=beta.example,www.gamma.example', (row) => ['b', 'c'].includes(row.suffix)],
    ['q=alpha', (row) => row.name.toLowerCase().includes('alpha')],
    ['q=data', (row) => row.name.toLowerCase().includes('data')],
    ['since=2026-11-20', (row) => row.lastSeen >= '2026-11-20'],
    [
      'intentLevel=hot&country=France&crmStatus=new&since=2026-11-25',
      (row) =>
        row.intentLevel === 'hot' &&
        row.country === 'France' &&
        row.crmStatus === 'new' &&
        row.lastSeen >= '2026-11-25',
    ],
  ])('combines with %s (AND), its total exact', async (query, keep) => {
    const ids = expected((row) => row.viewedPricing && keep(row));

    expect(await listed(`visitedPage=/pricing&${query}`)).toStrictEqual({
      ids,
      total: ids.length,
    });
    // The filter without visitedPage keeps more: visitedPage is what narrows it.
    const without = expected(keep);
    expect(await listed(query)).toStrictEqual({ ids: without, total: without.length });
  });

  it('pages by offset in the list order, total the same on every page', async () => {
    const viewed = expected((row) => row.viewedPricing);
    const ids: string[] = [];
    for (let offset = 0; offset < viewed.length + 2; offset += 2) {
      const response = await get(
        tenant.key,
        `/v1/companies?visitedPage=/pricing&limit=2&offset=${offset}`,
      );
      expect(response.body).toMatchObject({ total: viewed.length, limit: 2, offset });
      ids.push(...suffixes(tenant.workspace, response.body.data as Json[]));
    }

    expect(ids).toStrictEqual(viewed);
  });

  it('returns the same companies, byte for byte, as without the filter, and with fields', async () => {
    const all = await get(tenant.key, '/v1/companies');
    const filtered = await get(tenant.key, '/v1/companies?visitedPage=/pricing');
    const byId = new Map(
      (all.body.data as Json[]).map((company) => [company.id, JSON.stringify(company)]),
    );

    for (const company of filtered.body.data as Json[]) {
      expect(JSON.stringify(company)).toBe(byId.get(company.id));
    }
    const fields = ['name', 'domain', 'intentScore', 'contacts.name'];
    const selected = await get(
      tenant.key,
      `/v1/companies?visitedPage=/pricing&fields=${fields.join(',')}`,
    );
    expect(selected.body).toStrictEqual({
      ...filtered.body,
      data: (filtered.body.data as Json[]).map((company) => restricted(company, fields)),
    });
  });
});

describe('visitedSince', () => {
  let workspace: Workspace;
  let key: string;
  let company: (suffix: string) => Promise<Company>;

  beforeEach(async () => {
    ({ workspace, key } = await createTenant(t.prisma));
    company = (suffix) =>
      createCompany(t.prisma, workspace.id, { id: `${workspace.id}-${suffix}` });
  });

  const listed = async (query: string) => {
    const response = await get(key, `/v1/companies?${query}`);
    expect(response.status).toBe(200);
    expect(response.body.total).toBe(response.body.data.length);
    return suffixes(workspace, response.body.data as Json[]).sort();
  };

  it('defaults to 30 days before the request, counted on viewedAt', async () => {
    const day = 24 * HOUR;
    // A visit that started before the window, its /pricing viewed within it.
    await createVisit(t.prisma, await company('late-page'), {
      startedAt: new Date(Date.now() - 30 * day - HOUR),
      pages: [
        { path: '/' },
        { path: '/pricing', viewedAt: new Date(Date.now() - 30 * day + HOUR) },
      ],
    });
    // /pricing viewed before the window, another page of the same visit within it.
    await createVisit(t.prisma, await company('early-page'), {
      startedAt: new Date(Date.now() - 30 * day - 2 * HOUR),
      pages: [
        { path: '/pricing' },
        { path: '/blog', viewedAt: new Date(Date.now() - 30 * day + HOUR) },
      ],
    });
    await createVisit(t.prisma, await company('recent'), {
      startedAt: daysAgo(29),
      pages: [{ path: '/pricing' }],
    });
    await createVisit(t.prisma, await company('old'), {
      startedAt: daysAgo(31),
      pages: [{ path: '/pricing' }],
    });

    expect(await listed('visitedPage=/pricing')).toStrictEqual(['late-page', 'recent']);
    expect(await listed('visitedPage=/blog')).toStrictEqual(['early-page']);
    expect(
      await listed(`visitedPage=/pricing&visitedSince=${daysAgo(40).toISOString()}`),
    ).toStrictEqual(['early-page', 'late-page', 'old', 'recent']);
  });

  it('is inclusive, to the millisecond', async () => {
    const viewedAt = new Date(Math.floor(daysAgo(5).getTime() / 1000) * 1000 + 123);
    await createVisit(t.prisma, await company('x'), {
      startedAt: new Date(viewedAt.getTime() - 60_000),
      pages: [{ path: '/' }, { path: '/pricing', viewedAt }],
    });
    const at = (ms: number) => new Date(viewedAt.getTime() + ms).toISOString();

    expect(await listed(`visitedPage=/pricing&visitedSince=${at(0)}`)).toStrictEqual(['x']);
    expect(await listed(`visitedPage=/pricing&visitedSince=${at(1)}`)).toStrictEqual([]);
    expect(
      await listed(`visitedPage=/pricing&visitedSince=${at(0).replace('Z', '000001Z')}`),
    ).toStrictEqual([]);
    expect(await listed(`visitedPage=/pricing&visitedSince=${at(-1)}`)).toStrictEqual(['x']);
  });

  it('never reaches past the retention', async () => {
    await createVisit(t.prisma, await company('kept'), {
      startedAt: daysAgo(394),
      pages: [{ path: '/pricing' }],
    });
    await createVisit(t.prisma, await company('gone'), {
      startedAt: daysAgo(396),
      pages: [{ path: '/pricing' }],
    });

    expect(
      await listed(`visitedPage=/pricing&visitedSince=${daysAgo(500).toISOString()}`),
    ).toStrictEqual(['kept']);
    expect(await listed('visitedPage=/pricing&visitedSince=2000-01-01')).toStrictEqual(['kept']);
  });
});

describe('refusals', () => {
  let key: string;

  beforeAll(async () => {
    ({ key } = await createTenant(t.prisma));
  });

  it.each([
    ['visitedSince=2026-11-01', ['visitedSince needs visitedPage: give the pages it is about']],
    ['visitedPage=/pricing&visitedSince=yesterday', ['visitedSince must be an ISO 8601 date-time']],
    [
      'visitedPage=/pricing&visitedSince=2026-11-01&visitedSince=2026-11-02',
      ['visitedSince must be given only once'],
    ],
    ['visitedPage=pricing', ['visitedPage has an invalid pattern "pricing": it must start with /']],
    ['visitedPage=', ['visitedPage has an invalid pattern "": it is empty']],
    [
      'visitedPage=/a*b,/x%3F',
      [
        'visitedPage has an invalid pattern "/a*b": it may hold * only at its end',
        'visitedPage has an invalid pattern "/x?": it must not hold ? or # (paths are stored without their query string and fragment)',
      ],
    ],
    [
      `visitedPage=${Array.from({ length: 11 }, (_, i) => `/p${i}`).join(',')}`,
      ['visitedPage has 11 patterns: give 1 to 10, comma-separated'],
    ],
  ])('refuses %s', async (query, messages) => {
    const url = `/v1/companies?${query}`;
    expect(expectValidationError(await get(key, url), url)).toStrictEqual(messages);
  });

  it('reports visitedPage and the other parameters together, one entry each', async () => {
    const url = '/v1/companies?visitedPage=pricing&limit=0&intentLevel=lukewarm';

    const messages = expectValidationError(await get(key, url), url);

    expect([...messages].sort()).toStrictEqual([
      'intentLevel has an unknown value "lukewarm": give one or more of hot, warm, cold, comma-separated',
      'limit must not be less than 1',
      'visitedPage has an invalid pattern "pricing": it must start with /',
    ]);
  });

  it('is no parameter of the leads list', async () => {
    const url = '/v1/leads?visitedPage=/pricing';
    const messages = expectValidationError(await get(key, url), url);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatch(/^property visitedPage should not exist/);
  });
});

describe('scopes', () => {
  let workspace: Workspace;

  beforeAll(async () => {
    ({ workspace } = await createTenant(t.prisma));
    const company = await createCompany(t.prisma, workspace.id);
    await createVisit(t.prisma, company, { pages: [{ path: '/pricing' }] });
  });

  const keyWith = async (scopes: string[]) =>
    (await createApiKey(t.prisma, workspace.id, { scopes })).key;

  it.each([
    [['companies:read'], 'visits:read', 'scope'],
    [['companies:read', 'leads:read', 'changes:read'], 'visits:read', 'scope'],
    [['visits:read'], 'companies:read', 'scope'],
    [['leads:read'], 'companies:read, visits:read', 'scopes'],
  ])('a key with %j using visitedPage gets the 403 naming %s', async (scopes, lacks, noun) => {
    const key = await keyWith(scopes);
    const path = '/v1/companies?visitedPage=/pricing';

    const response = await get(key, path);

    expectErrorEnvelope(response, {
      status: 403,
      error: 'FORBIDDEN',
      path,
      message: `This key lacks the ${noun} ${lacks}`,
    });
    expect(response.headers['www-authenticate']).toBe(
      `Bearer error="insufficient_scope", scope="${lacks.replace(', ', ' ')}"`,
    );
  });

  it('needs visits:read for visitedPage only: the list without it reads as before', async () => {
    const key = await keyWith(['companies:read']);

    expect((await get(key, '/v1/companies')).status).toBe(200);
    expect((await get(key, '/v1/companies?intentLevel=warm')).status).toBe(200);
    // visitedSince without visitedPage reveals nothing: its 400, not a 403.
    expect((await get(key, '/v1/companies?visitedSince=2026-11-01')).status).toBe(400);
  });

  it.each([[['companies:read', 'visits:read']], [[]]])(
    'a key with %j reads the companies by page',
    async (scopes) => {
      const key = await keyWith(scopes);

      const response = await get(key, '/v1/companies?visitedPage=/pricing');

      expect(response.status).toBe(200);
      expect(response.body.total).toBe(1);
    },
  );
});

describe('the ETag', () => {
  it('is made from the body: a new page view without any write to the companies changes it', async () => {
    const { workspace, key } = await createTenant(t.prisma);
    const first = await createCompany(t.prisma, workspace.id, { intentScore: 90 });
    const second = await createCompany(t.prisma, workspace.id, { intentScore: 80 });
    await createVisit(t.prisma, first, { pages: [{ path: '/pricing' }] });
    const path = '/v1/companies?visitedPage=/pricing&fields=name';

    const before = await get(key, path);
    const etag = before.headers.etag;
    const unchanged = await get(key, path).set('If-None-Match', etag);
    await createVisit(t.prisma, second, { pages: [{ path: '/pricing' }] });
    const after = await get(key, path).set('If-None-Match', etag);

    expect(before.status).toBe(200);
    expect(etag).toMatch(/^W\/"[A-Za-z0-9_-]{27}"$/);
    expect(unchanged.status).toBe(304);
    expect(unchanged.headers.etag).toBe(etag);
    expect(after.status).toBe(200);
    expect(after.headers.etag).not.toBe(etag);
    expect((after.body.data as Json[]).map((company) => company.id)).toStrictEqual([
      first.id,
      second.id,
    ]);
    // Another window is another request, with an ETag of its own.
    const since = await get(key, `${path}&visitedSince=${daysAgo(1).toISOString()}`);
    expect(since.headers.etag).not.toBe(after.headers.etag);
  });
});

import type { Company, PageView, Visit, Workspace } from '../../../src/generated/prisma/client';
import { createTestApp, type TestApp } from '../../support/app';
import {
  createApiKey,
  createCompany,
  createVisit,
  daysAgo,
  type VisitSeed,
} from '../../support/factories';
import {
  createTenant,
  expectErrorEnvelope,
  expectValidationError,
  getWithKey,
} from '../../support/http';

/*
 * The visits' reads (docs/visits.md): GET /v1/visits, GET /v1/visits/{id} and
 * GET /v1/companies/{id}/visits. The objects field by field, the order and its keyset paging by
 * signed cursor, the window (since, until, the retention), the filters (companyId, page patterns),
 * fields, the 404s, the workspace's isolation, the visits:read scope, ETags, and the 400s.
 */

type Json = Record<string, unknown>;

let t: TestApp;

beforeAll(async () => {
  // Paging and the bounds send many requests with one key: the per-minute limit is not the subject.
  t = await createTestApp({ env: { RATE_LIMIT_PER_MINUTE: '1000000' } });
});

afterAll(async () => {
  await t.close();
});

const get = (key: string, path: string) => getWithKey(t.app, path, key);

const HOUR = 60 * 60 * 1000;

/** A fixed instant of the recent past, whole seconds, that the tests count hours back from. */
const T = new Date(Math.floor(daysAgo(2).getTime() / 1000) * 1000);
const hoursBefore = (hours: number) => new Date(T.getTime() - hours * HOUR);

/** A page view as docs/visits.md states it, from its row: these fields, in this order. */
const pageJson = (page: PageView): Json => ({
  hostname: page.hostname,
  path: page.path,
  title: page.title,
  viewedAt: page.viewedAt.toISOString(),
  secondsOnPage: page.secondsOnPage,
});

/** A visit as docs/visits.md states it, from its rows, its derived fields computed here. */
function visitJson({ visit, pages }: { visit: Visit; pages: PageView[] }): Json {
  return {
    id: visit.id,
    companyId: visit.companyId,
    startedAt: visit.startedAt.toISOString(),
    endedAt: visit.endedAt.toISOString(),
    durationSeconds: Math.floor((visit.endedAt.getTime() - visit.startedAt.getTime()) / 1000),
    pageViewCount: pages.length,
    landingPage: pages[0].path,
    referrer: visit.referrer,
    source: visit.source,
    medium: visit.medium,
    campaign: visit.campaign,
    term: visit.term,
    content: visit.content,
    deviceType: visit.deviceType,
    country: visit.country,
    pages: pages.map(pageJson),
  };
}

const VISIT_FIELD_ORDER = [
  'id',
  'companyId',
  'startedAt',
  'endedAt',
  'durationSeconds',
  'pageViewCount',
  'landingPage',
  'referrer',
  'source',
  'medium',
  'campaign',
  'term',
  'content',
  'deviceType',
  'country',
  'pages',
];
const PAGE_FIELD_ORDER = ['hostname', 'path', 'title', 'viewedAt', 'secondsOnPage'];

/** A workspace with a key and one company. */
async function tenantWithCompany(): Promise<{
  workspace: Workspace;
  key: string;
  company: Company;
}> {
  const { workspace, key } = await createTenant(t.prisma);
  const company = await createCompany(t.prisma, workspace.id);
  return { workspace, key, company };
}

/** Visits of the company with ids `<workspace id>-<suffix>`, started `hours` before T. */
async function seed(company: Company, rows: [suffix: string, hours: number, seed?: VisitSeed][]) {
  for (const [suffix, hours, rest] of rows) {
    await createVisit(t.prisma, company, {
      id: `${company.workspaceId}-${suffix}`,
      startedAt: hoursBefore(hours),
      ...rest,
    });
  }
}

const suffixes = (workspace: Workspace, data: Json[]) =>
  data.map(({ id }) => (id as string).slice(workspace.id.length + 1));

/** Every page of a list, following nextCursor; `between` runs after each page but the last. */
async function pageAll(
  key: string,
  path: string,
  query: string,
  between: (page: number) => Promise<void> = async () => {},
): Promise<Json[][]> {
  const pages: Json[][] = [];
  let cursor: string | null = null;
  do {
    const separator = query === '' ? '' : '&';
    const cursorQuery: string = cursor === null ? '' : `${separator}cursor=${cursor}`;
    const response = await get(key, `${path}?${query}${cursorQuery}`);
    expect(response.status).toBe(200);
    const { data, nextCursor, hasMore } = response.body as {
      data: Json[];
      nextCursor: string | null;
      hasMore: boolean;
    };
    // A string exactly when there is more.
    expect(typeof nextCursor === 'string').toBe(hasMore);
    pages.push(data);
    // A cursor that does not move on would page forever: no test here seeds 100 pages.
    if (pages.length > 100) throw new Error(`${path}?${query}: still paging after 100 pages`);
    cursor = nextCursor;
    if (cursor !== null) await between(pages.length);
  } while (cursor !== null);
  return pages;
}

describe('a visit', () => {
  it('has every field of docs/visits.md, in its order, pages in theirs, and nothing else', async () => {
    const { workspace, key, company } = await tenantWithCompany();
    const startedAt = hoursBefore(5);
    const at = (seconds: number) => new Date(startedAt.getTime() + seconds * 1000);
    const seeded = await createVisit(t.prisma, company, {
      id: 'vi_acme_1',
      startedAt,
      endedAt: at(754.999),
      referrer: 'https://www.google.com/',
      source: 'newsletter',
      medium: 'email',
      campaign: 'black-friday',
      term: 'visitor id',
      content: 'banner',
      deviceType: 'tablet',
      country: 'FR',
      pages: [
        { path: '/pricing', hostname: 'www.acme.example', title: 'Pricing', viewedAt: at(0) },
        // Two pages at the same instant: in the order the tracker gave them.
        { path: '/z-first', title: null, viewedAt: at(120), secondsOnPage: 0 },
        { path: '/a-second', viewedAt: at(120), secondsOnPage: 30 },
        { path: '/caf%C3%A9', viewedAt: at(754.999), secondsOnPage: null },
      ],
    });

    const list = await get(key, '/v1/visits');
    const one = await get(key, '/v1/visits/vi_acme_1');

    expect(list.status).toBe(200);
    const expected = visitJson(seeded);
    expect(expected).toMatchObject({
      durationSeconds: 754,
      pageViewCount: 4,
      landingPage: '/pricing',
    });
    expect(list.body).toStrictEqual({ data: [expected], nextCursor: null, hasMore: false });
    const [visit] = list.body.data as Json[];
    expect(Object.keys(visit)).toStrictEqual(VISIT_FIELD_ORDER);
    for (const page of visit.pages as Json[]) {
      expect(Object.keys(page)).toStrictEqual(PAGE_FIELD_ORDER);
    }
    expect((visit.pages as Json[]).map((page) => page.path)).toStrictEqual([
      '/pricing',
      '/z-first',
      '/a-second',
      '/caf%C3%A9',
    ]);
    // The single read is the same object, byte for byte.
    expect(one.status).toBe(200);
    expect(one.text).toBe(JSON.stringify(expected));
    expect(workspace.id).toBe(company.workspaceId);
  });

  it('has its nullable fields present as null when unknown, never omitted', async () => {
    const { key, company } = await tenantWithCompany();
    const seeded = await createVisit(t.prisma, company, {
      deviceType: 'other',
      pages: [{ title: null, secondsOnPage: null }],
    });

    const response = await get(key, `/v1/visits/${seeded.visit.id}`);

    expect(response.status).toBe(200);
    for (const field of [
      'referrer',
      'source',
      'medium',
      'campaign',
      'term',
      'content',
      'country',
    ]) {
      expect(response.body).toHaveProperty(field, null);
    }
    expect(response.body.pages).toStrictEqual([
      expect.objectContaining({ title: null, secondsOnPage: null }),
    ]);
    expect(response.body.deviceType).toBe('other');
  });

  it('has a duration of 0 for a visit that ended when it started', async () => {
    const { key, company } = await tenantWithCompany();
    const startedAt = hoursBefore(1);
    const seeded = await createVisit(t.prisma, company, { startedAt, endedAt: startedAt });

    const response = await get(key, `/v1/visits/${seeded.visit.id}`);

    expect(response.body).toMatchObject({ durationSeconds: 0, endedAt: startedAt.toISOString() });
  });
});

describe('the order', () => {
  it('is startedAt descending, ties by id descending compared byte by byte', async () => {
    const { workspace, key, company } = await tenantWithCompany();
    await seed(company, [
      ['a', 2],
      ['B', 2],
      ['10', 2],
      ['9', 2],
      ['old', 3],
      ['new', 1],
      ['b', 2],
    ]);

    const response = await get(key, '/v1/visits');

    expect(response.status).toBe(200);
    // '10' < '9' < 'B' < 'a' < 'b' in bytes.
    expect(suffixes(workspace, response.body.data)).toStrictEqual([
      'new',
      'b',
      'a',
      'B',
      '9',
      '10',
      'old',
    ]);
  });
});

describe('paging by cursor', () => {
  it('goes through every visit once, in order, at every limit', async () => {
    const { workspace, key, company } = await tenantWithCompany();
    await seed(company, [
      ['e', 0],
      ['d', 1],
      ['c', 1],
      ['b', 2],
      ['a', 3],
      ['Z', 3],
      ['Y', 3],
    ]);
    const everything = suffixes(workspace, (await get(key, '/v1/visits')).body.data);
    expect(everything).toStrictEqual(['e', 'd', 'c', 'b', 'a', 'Z', 'Y']);

    for (const limit of [1, 2, 3, 6, 7, 8]) {
      const pages = await pageAll(key, '/v1/visits', `limit=${limit}`);
      for (const page of pages.slice(0, -1)) expect(page).toHaveLength(limit);
      expect(pages.at(-1)!.length).toBeLessThanOrEqual(limit);
      expect(suffixes(workspace, pages.flat())).toStrictEqual(everything);
    }
  });

  it('repeats and skips nothing while visits arrive: newer ones sort before the first page', async () => {
    const { workspace, key, company } = await tenantWithCompany();
    await seed(company, [
      ['e', 0],
      ['d', 1],
      ['c', 1],
      ['b', 2],
      ['a', 3],
      ['Z', 3],
    ]);

    const pages = await pageAll(key, '/v1/visits', 'limit=2', async (page) => {
      if (page !== 1) return;
      // After the first page (e, d), whose cursor is d's position: a newer visit and one tied
      // with d that sorts before it come before that position; one tied with d that sorts after
      // it, and an older one, come after.
      await seed(company, [
        ['n', -1],
        ['f', 1],
        ['cc', 1],
        ['y', 2.5],
      ]);
    });

    expect(pages.map((page) => suffixes(workspace, page))).toStrictEqual([
      ['e', 'd'],
      ['cc', 'c'],
      ['b', 'y'],
      ['a', 'Z'],
    ]);
    const now = await get(key, '/v1/visits');
    expect(suffixes(workspace, now.body.data)).toStrictEqual([
      'n',
      'e',
      'f',
      'd',
      'cc',
      'c',
      'b',
      'y',
      'a',
      'Z',
    ]);
  });

  it("pages a company's visits and the filtered lists the same way", async () => {
    const { workspace, key, company } = await tenantWithCompany();
    const other = await createCompany(t.prisma, workspace.id);
    await seed(company, [
      ['a', 1, { pages: [{ path: '/pricing' }] }],
      ['b', 2],
      ['c', 3, { pages: [{ path: '/pricing' }] }],
      ['d', 4, { pages: [{ path: '/pricing' }] }],
      ['e', 5],
    ]);
    await seed(other, [
      ['x', 1.5, { pages: [{ path: '/pricing' }] }],
      ['y', 3.5],
    ]);

    const ofCompany = await pageAll(key, `/v1/companies/${company.id}/visits`, 'limit=2');
    const byPage = await pageAll(key, '/v1/visits', 'limit=1&page=/pricing');
    const byCompany = await pageAll(key, '/v1/visits', `limit=1&companyId=${other.id}`);

    expect(suffixes(workspace, ofCompany.flat())).toStrictEqual(['a', 'b', 'c', 'd', 'e']);
    expect(suffixes(workspace, byPage.flat())).toStrictEqual(['a', 'x', 'c', 'd']);
    expect(suffixes(workspace, byCompany.flat())).toStrictEqual(['x', 'y']);
  });

  describe('a cursor that is not this list’s', () => {
    let tenant: { workspace: Workspace; key: string; company: Company };
    let other: Company;
    let cursors: { visits: string; company: string; otherCompany: string };

    const cursorOf = async (key: string, path: string) => {
      const response = await get(key, `${path}?limit=1`);
      expect(response.body.hasMore).toBe(true);
      return response.body.nextCursor as string;
    };

    beforeAll(async () => {
      tenant = await tenantWithCompany();
      other = await createCompany(t.prisma, tenant.workspace.id);
      await seed(tenant.company, [
        ['a', 1],
        ['b', 2],
      ]);
      await seed(other, [
        ['c', 1],
        ['d', 2],
      ]);
      cursors = {
        visits: await cursorOf(tenant.key, '/v1/visits'),
        company: await cursorOf(tenant.key, `/v1/companies/${tenant.company.id}/visits`),
        otherCompany: await cursorOf(tenant.key, `/v1/companies/${other.id}/visits`),
      };
    });

    /** The cursor with its position edited (a visit id of the same length), its MAC kept. */
    const edited = (cursor: string) => {
      const [payload, mac] = cursor.split('.');
      const position = Buffer.from(payload, 'base64url').toString('utf8');
      const changed = position.replace(/.$/, (last) => (last === 'a' ? 'b' : 'a'));
      return `${Buffer.from(changed, 'utf8').toString('base64url')}.${mac}`;
    };

    it.each([
      ['malformed', () => 'abc', '/v1/visits'],
      ['edited', () => edited(cursors.visits), '/v1/visits'],
      ['with its MAC cut', () => cursors.visits.slice(0, -2), '/v1/visits'],
      ["a company list's", () => cursors.company, '/v1/visits'],
      ["the workspace list's, on a company's", () => cursors.visits, 'company'],
      ["another company's", () => cursors.otherCompany, 'company'],
    ])('is a 400: %s', async (_name, cursor, where) => {
      const path = where === 'company' ? `/v1/companies/${tenant.company.id}/visits` : where;
      const url = `${path}?cursor=${encodeURIComponent(cursor())}`;

      const response = await get(tenant.key, url);

      expect(expectValidationError(response, url)).toStrictEqual(['cursor is not valid']);
    });

    it("is a 400 when it is another workspace's, of the same list", async () => {
      const stranger = await tenantWithCompany();
      await seed(stranger.company, [
        ['a', 1],
        ['b', 2],
      ]);
      const foreign = await cursorOf(stranger.key, '/v1/visits');
      const url = `/v1/visits?cursor=${foreign}`;

      const response = await get(tenant.key, url);

      expect(expectValidationError(response, url)).toStrictEqual(['cursor is not valid']);
      // The same cursor is good where it was issued.
      expect((await get(stranger.key, url)).status).toBe(200);
    });

    it('is good where it was issued', async () => {
      for (const [path, cursor] of [
        ['/v1/visits', cursors.visits],
        [`/v1/companies/${tenant.company.id}/visits`, cursors.company],
      ]) {
        const response = await get(tenant.key, `${path}?limit=1&cursor=${cursor}`);
        expect(response.status).toBe(200);
        expect(response.body.data).toHaveLength(1);
      }
    });
  });
});

describe('limit', () => {
  it('is 50 by default, and at most 200', async () => {
    const { key, company } = await tenantWithCompany();
    await seed(
      company,
      Array.from({ length: 51 }, (_, i): [string, number] => [String(i).padStart(2, '0'), i]),
    );

    const byDefault = await get(key, '/v1/visits');
    const most = await get(key, '/v1/visits?limit=200');
    const one = await get(key, '/v1/visits?limit=001');

    expect(byDefault.body.data).toHaveLength(50);
    expect(byDefault.body.hasMore).toBe(true);
    expect(most.body.data).toHaveLength(51);
    expect(most.body).toMatchObject({ nextCursor: null, hasMore: false });
    expect(one.body.data).toHaveLength(1);
  });

  it.each([
    ['0', 'limit must not be less than 1'],
    ['-1', 'limit must not be less than 1'],
    ['201', 'limit must not be greater than 200'],
    ['1.5', 'limit must be an integer'],
    ['1e2', 'limit must be an integer'],
    ['', 'limit must be an integer'],
    ['10&limit=10', 'limit must be given only once'],
  ])('refuses limit=%s', async (value, message) => {
    const { key, company } = await tenantWithCompany();
    for (const path of ['/v1/visits', `/v1/companies/${company.id}/visits`]) {
      const url = `${path}?limit=${value}`;
      expect(expectValidationError(await get(key, url), url)).toStrictEqual([message]);
    }
  });
});

describe('since and until', () => {
  let tenant: { workspace: Workspace; key: string; company: Company };

  beforeAll(async () => {
    tenant = await tenantWithCompany();
    await seed(tenant.company, [
      ['a', 1],
      ['b', 2],
      ['c', 3],
      ['d', 4],
    ]);
  });

  const listed = async (query: string) => {
    const response = await get(tenant.key, `/v1/visits?${query}`);
    expect(response.status).toBe(200);
    return suffixes(tenant.workspace, response.body.data);
  };

  it('keeps startedAt >= since and startedAt < until', async () => {
    const since = hoursBefore(3).toISOString();
    const until = hoursBefore(1).toISOString();

    expect(await listed(`since=${since}`)).toStrictEqual(['a', 'b', 'c']);
    expect(await listed(`until=${until}`)).toStrictEqual(['b', 'c', 'd']);
    expect(await listed(`since=${since}&until=${until}`)).toStrictEqual(['b', 'c']);
    // Compared to the millisecond, whatever the precision given.
    const justAfter = new Date(hoursBefore(3).getTime() + 1).toISOString();
    expect(await listed(`since=${justAfter}`)).toStrictEqual(['a', 'b']);
    const nanosAfter = hoursBefore(3).toISOString().replace('Z', '000001Z');
    expect(await listed(`since=${nanosAfter}`)).toStrictEqual(['a', 'b']);
  });

  it('combines with the cursor: every page keeps the window', async () => {
    const since = hoursBefore(4).toISOString();
    const until = hoursBefore(1).toISOString();

    const pages = await pageAll(tenant.key, '/v1/visits', `limit=1&since=${since}&until=${until}`);

    expect(pages.map((page) => suffixes(tenant.workspace, page))).toStrictEqual([
      ['b'],
      ['c'],
      ['d'],
    ]);
  });

  it.each([
    ['until=2026-01-01&since=2026-01-01', ['until must be after since']],
    ['since=2026-02-01&until=2026-01-01', ['until must be after since']],
    ['since=yesterday', ['since must be an ISO 8601 date-time']],
    ['until=2026-13-45', ['until must be an ISO 8601 date-time']],
    ['since=2026-01-01&since=2026-01-02', ['since must be given only once']],
    ['until=2026-01-01&until=2026-01-02', ['until must be given only once']],
  ])('refuses %s', async (query, messages) => {
    const url = `/v1/visits?${query}`;
    expect(expectValidationError(await get(tenant.key, url), url)).toStrictEqual(messages);
  });
});

describe('the retention', () => {
  it('leaves out every visit that started before now - VISIT_RETENTION_DAYS, whatever since says', async () => {
    const { workspace, key, company } = await tenantWithCompany();
    await createVisit(t.prisma, company, { id: `${workspace.id}-kept`, startedAt: daysAgo(394) });
    const gone = await createVisit(t.prisma, company, {
      id: `${workspace.id}-gone`,
      startedAt: daysAgo(396),
    });

    const byDefault = await get(key, '/v1/visits');
    const sinceEarlier = await get(key, `/v1/visits?since=${daysAgo(500).toISOString()}`);
    const ofCompany = await get(key, `/v1/companies/${company.id}/visits`);
    const one = await get(key, `/v1/visits/${gone.visit.id}`);

    for (const response of [byDefault, sinceEarlier, ofCompany]) {
      expect(suffixes(workspace, response.body.data)).toStrictEqual(['kept']);
    }
    expectErrorEnvelope(one, {
      status: 404,
      error: 'NOT_FOUND',
      path: `/v1/visits/${gone.visit.id}`,
      message: 'Not Found',
    });
  });
});

describe('companyId', () => {
  let tenant: { workspace: Workspace; key: string; company: Company };
  let second: Company;
  let third: Company;

  beforeAll(async () => {
    tenant = await tenantWithCompany();
    second = await createCompany(t.prisma, tenant.workspace.id);
    third = await createCompany(t.prisma, tenant.workspace.id);
    await seed(tenant.company, [['a', 1]]);
    await seed(second, [['b', 2]]);
    await seed(third, [['c', 3]]);
  });

  const listed = async (query: string) => {
    const response = await get(tenant.key, `/v1/visits?${query}`);
    expect(response.status).toBe(200);
    return suffixes(tenant.workspace, response.body.data);
  };

  it('keeps the visits of one company, or of several (comma-separated or repeated)', async () => {
    expect(await listed(`companyId=${second.id}`)).toStrictEqual(['b']);
    expect(await listed(`companyId=${tenant.company.id},${third.id}`)).toStrictEqual(['a', 'c']);
    expect(await listed(`companyId=${tenant.company.id}&companyId=${third.id}`)).toStrictEqual([
      'a',
      'c',
    ]);
    expect(await listed(`companyId=${third.id},${third.id}`)).toStrictEqual(['c']);
  });

  it('matches each id exactly: nothing is trimmed, an id no company has matches nothing', async () => {
    expect(await listed(`companyId=%20${second.id}`)).toStrictEqual([]);
    expect(await listed(`companyId=${second.id.toUpperCase()}`)).toStrictEqual([]);
    expect(await listed('companyId=co_nobody')).toStrictEqual([]);
    expect(await listed(`companyId=co_nobody,${second.id}`)).toStrictEqual(['b']);
  });

  it.each([
    [
      '',
      ['companyId has an invalid id "": give company ids of 1 to 100 characters, comma-separated'],
    ],
    [
      'co_a,,co_b',
      ['companyId has an invalid id "": give company ids of 1 to 100 characters, comma-separated'],
    ],
    [
      'co_a%00',
      [
        'companyId has an invalid id "co_a\\u0000": give company ids of 1 to 100 characters, comma-separated',
      ],
    ],
    [
      'x'.repeat(101),
      [
        `companyId has an invalid id "${'x'.repeat(40)}...": give company ids of 1 to 100 characters, comma-separated`,
      ],
    ],
    [
      Array.from({ length: 101 }, (_, i) => `co_${i}`).join(','),
      ['companyId has 101 ids: give 1 to 100, comma-separated'],
    ],
  ])('refuses companyId=%s', async (value, messages) => {
    const url = `/v1/visits?companyId=${value}`;
    expect(expectValidationError(await get(tenant.key, url), url)).toStrictEqual(messages);
  });

  it('takes 100 ids', async () => {
    const ids = [...Array.from({ length: 99 }, (_, i) => `co_${i}`), third.id];
    expect(await listed(`companyId=${ids.join(',')}`)).toStrictEqual(['c']);
  });

  it("is no parameter of a company's visits", async () => {
    const url = `/v1/companies/${second.id}/visits?companyId=${second.id}`;
    const messages = expectValidationError(await get(tenant.key, url), url);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatch(/^property companyId should not exist/);
  });
});

describe('page patterns', () => {
  let tenant: { workspace: Workspace; key: string; company: Company };

  // One visit per path, its id the path's name, and one visit of two pages.
  const PATHS: [string, string][] = [
    ['pricing', '/pricing'],
    ['Pricing', '/Pricing'],
    ['pricing-slash', '/pricing/'],
    ['blog', '/blog'],
    ['blog-root', '/blog/'],
    ['blog-post', '/blog/a'],
    ['demo', '/demo'],
    ['demo-request', '/demo-request'],
    ['cafe', '/caf%C3%A9'],
    ['tags', '/tags/a,b'],
    ['space', '/ b'],
  ];

  beforeAll(async () => {
    tenant = await tenantWithCompany();
    await seed(
      tenant.company,
      PATHS.map(([name, path], i): [string, number, VisitSeed] => [name, i, { pages: [{ path }] }]),
    );
    // The matching page is not the first: a visit matches by any of its pages.
    await seed(tenant.company, [['two', 20, { pages: [{ path: '/' }, { path: '/careers' }] }]]);
  });

  const matched = async (query: string) => {
    const response = await get(tenant.key, `/v1/visits?${query}`);
    expect(response.status).toBe(200);
    return suffixes(tenant.workspace, response.body.data).sort();
  };

  it.each([
    ['/pricing', ['pricing']],
    ['/Pricing', ['Pricing']],
    ['/pricing/', ['pricing-slash']],
    ['/pric', []],
    ['/blog/*', ['blog-post', 'blog-root']],
    ['/blog*', ['blog', 'blog-post', 'blog-root']],
    ['/demo*', ['demo', 'demo-request']],
    ['/careers', ['two']],
    // Decoded once, as every parameter: %2F is `/`, %25 is `%`, + is a space.
    ['%2Fpricing', ['pricing']],
    ['/caf%25C3%25A9', ['cafe']],
    ['/caf%C3%A9', []],
    ['/+b', ['space']],
    // A path holding a comma: a prefix that ends before it.
    ['/tags/a*', ['tags']],
    ['/tags/a', []],
  ])('page=%s matches %j', async (pattern, names) => {
    expect(await matched(`page=${pattern}`)).toStrictEqual([...names].sort());
  });

  it('matches every path with /*', async () => {
    expect(await matched('page=/*')).toStrictEqual([...PATHS.map(([name]) => name), 'two'].sort());
  });

  it('keeps the visits matching any of several patterns, comma-separated or repeated', async () => {
    const expected = ['blog-post', 'blog-root', 'pricing'];
    expect(await matched('page=/pricing,/blog/*')).toStrictEqual(expected);
    expect(await matched('page=/pricing&page=/blog/*')).toStrictEqual(expected);
    expect(await matched('page=/pricing,/pricing,/blog/*')).toStrictEqual(expected);
  });

  it('combines with companyId, since and until (AND)', async () => {
    const { workspace, key, company } = await tenantWithCompany();
    const other = await createCompany(t.prisma, workspace.id);
    await seed(company, [
      ['a', 0, { pages: [{ path: '/pricing' }] }],
      ['b', 2, { pages: [{ path: '/pricing' }] }],
      ['c', 1, { pages: [{ path: '/demo' }] }],
    ]);
    await seed(other, [['d', 1, { pages: [{ path: '/pricing' }] }]]);
    const listed = async (path: string) =>
      suffixes(workspace, (await get(key, path)).body.data as Json[]);

    expect(await listed('/v1/visits?page=/pricing')).toStrictEqual(['a', 'd', 'b']);
    expect(await listed(`/v1/visits?page=/pricing&companyId=${other.id}`)).toStrictEqual(['d']);
    expect(
      await listed(`/v1/visits?page=/pricing&until=${hoursBefore(1).toISOString()}`),
    ).toStrictEqual(['b']);
    expect(
      await listed(`/v1/visits?page=/pricing,/demo*&since=${hoursBefore(1).toISOString()}`),
    ).toStrictEqual(['a', 'd', 'c']);
    expect(await listed(`/v1/companies/${company.id}/visits?page=/pricing`)).toStrictEqual([
      'a',
      'b',
    ]);
  });

  const invalid = (pattern: string, problem: string) =>
    `page has an invalid pattern ${JSON.stringify(pattern)}: it ${problem}`;

  it('refuses each bad pattern with a message of its own, naming it', async () => {
    const url = '/v1/visits?page=/a*b,pricing,/x%3Fy,/x%23y,,/ok,/n%00';

    const messages = expectValidationError(await get(tenant.key, url), url);

    expect(messages).toStrictEqual([
      invalid('/a*b', 'may hold * only at its end'),
      invalid('pricing', 'must start with /'),
      invalid(
        '/x?y',
        'must not hold ? or # (paths are stored without their query string and fragment)',
      ),
      invalid(
        '/x#y',
        'must not hold ? or # (paths are stored without their query string and fragment)',
      ),
      invalid('', 'is empty'),
      invalid('/n\u0000', 'holds a character no path has'),
    ]);
  });

  it.each([
    ['empty', '', [invalid('', 'is empty')]],
    ['with a space after its comma', '/a,%20/b', [invalid(' /b', 'must start with /')]],
    ['without its leading /', '**', [invalid('**', 'must start with /')]],
    ['with a * before its end', '/**', [invalid('/**', 'may hold * only at its end')]],
    [
      'of 2,049 characters',
      `/${'a'.repeat(2048)}`,
      [`page has an invalid pattern "/${'a'.repeat(39)}...": it must be at most 2048 characters`],
    ],
    [
      'eleven patterns',
      Array.from({ length: 11 }, (_, i) => `/p${i}`).join(','),
      ['page has 11 patterns: give 1 to 10, comma-separated'],
    ],
  ])('refuses a page value %s', async (_name, value, messages) => {
    const url = `/v1/visits?page=${value}`;
    expect(expectValidationError(await get(tenant.key, url), url)).toStrictEqual(messages);
  });

  it('takes 10 patterns, and one of 2,048 characters', async () => {
    const ten = [...Array.from({ length: 9 }, (_, i) => `/p${i}`), '/blog/a'].join(',');
    expect(await matched(`page=${ten}`)).toStrictEqual(['blog-post']);
    expect(await matched(`page=/${'a'.repeat(2046)}*`)).toStrictEqual([]);
  });
});

describe('fields', () => {
  let tenant: { workspace: Workspace; key: string; company: Company };
  let seeded: { visit: Visit; pages: PageView[] };

  beforeAll(async () => {
    tenant = await tenantWithCompany();
    seeded = await createVisit(t.prisma, tenant.company, {
      startedAt: hoursBefore(1),
      referrer: 'https://search.example/',
      pages: [
        { path: '/pricing', title: 'Pricing' },
        { path: '/demo', title: 'Demo' },
      ],
    });
  });

  it.each([
    ['startedAt,referrer', ['id', 'startedAt', 'referrer']],
    ['referrer,startedAt,startedAt', ['id', 'startedAt', 'referrer']],
    ['pages', ['id', 'pages']],
    ['pages.path,pages.viewedAt,country', ['id', 'country', 'pages']],
    ['id', ['id']],
  ])('fields=%s returns those fields and id, in the object’s order', async (fields, keys) => {
    const whole = visitJson(seeded);
    for (const path of [
      `/v1/visits?fields=${fields}`,
      `/v1/companies/${tenant.company.id}/visits?fields=${fields}`,
      `/v1/visits/${seeded.visit.id}?fields=${fields}`,
    ]) {
      const response = await get(tenant.key, path);
      expect(response.status).toBe(200);
      const item = (path.includes('/visits?') ? response.body.data[0] : response.body) as Json;
      expect(Object.keys(item)).toStrictEqual(keys);
      for (const key of keys.filter((name) => name !== 'pages')) {
        expect(item[key]).toStrictEqual(whole[key]);
      }
      if (keys.includes('pages')) {
        const pageFields = fields
          .split(',')
          .filter((name) => name.startsWith('pages.'))
          .map((name) => name.slice('pages.'.length));
        const expectedPages = (whole.pages as Json[]).map((page) =>
          pageFields.length === 0
            ? page
            : Object.fromEntries(
                PAGE_FIELD_ORDER.filter((f) => pageFields.includes(f)).map((f) => [f, page[f]]),
              ),
        );
        expect(item.pages).toStrictEqual(expectedPages);
        for (const page of item.pages as Json[]) {
          expect(Object.keys(page)).toStrictEqual(
            pageFields.length === 0
              ? PAGE_FIELD_ORDER
              : PAGE_FIELD_ORDER.filter((f) => pageFields.includes(f)),
          );
        }
      }
    }
  });

  it('keeps the page envelope whole', async () => {
    await createVisit(t.prisma, tenant.company, { startedAt: hoursBefore(2) });

    const response = await get(tenant.key, '/v1/visits?fields=country&limit=1');

    expect(Object.keys(response.body)).toStrictEqual(['data', 'nextCursor', 'hasMore']);
    expect(response.body.hasMore).toBe(true);
    const next = await get(
      tenant.key,
      `/v1/visits?fields=country&limit=1&cursor=${response.body.nextCursor}`,
    );
    expect(next.body.data).toHaveLength(1);
    expect(next.body.hasMore).toBe(false);
  });

  it.each(['/v1/visits', 'company', 'one'])(
    'refuses an unknown or empty name on %s',
    async (where) => {
      const path =
        where === 'company'
          ? `/v1/companies/${tenant.company.id}/visits`
          : where === 'one'
            ? `/v1/visits/${seeded.visit.id}`
            : where;
      const unknown = `${path}?fields=colour,pages.colour,contacts`;
      const empty = `${path}?fields=startedAt,,id`;

      const unknownMessages = expectValidationError(await get(tenant.key, unknown), unknown);
      const emptyMessages = expectValidationError(await get(tenant.key, empty), empty);

      expect(unknownMessages).toHaveLength(3);
      for (const [i, name] of ['colour', 'pages.colour', 'contacts'].entries()) {
        expect(unknownMessages[i]).toMatch(
          new RegExp(
            `^fields has an unknown name "${name.replace('.', '\\.')}": give one or more of id, companyId, startedAt, `,
          ),
        );
        expect(unknownMessages[i]).toContain('pages, pages.hostname, pages.path');
      }
      expect(emptyMessages).toHaveLength(1);
      expect(emptyMessages[0]).toMatch(/^fields has an empty name: give one or more of id, /);
    },
  );
});

describe('GET /v1/visits/{id}', () => {
  it('is the one 404 for an unknown id, an impossible id and another workspace’s id', async () => {
    const mine = await tenantWithCompany();
    const theirs = await tenantWithCompany();
    const foreign = await createVisit(t.prisma, theirs.company);

    for (const id of ['vi_nobody', foreign.visit.id, 'x'.repeat(101), 'a%00b']) {
      const path = `/v1/visits/${id}`;
      const response = await get(mine.key, path);
      expectErrorEnvelope(response, {
        status: 404,
        error: 'NOT_FOUND',
        path,
        message: 'Not Found',
      });
      expect(response.headers['x-ratelimit-limit']).toBeDefined();
    }
    expect((await get(theirs.key, `/v1/visits/${foreign.visit.id}`)).status).toBe(200);
  });

  it('takes fields alone: any other parameter is a 400', async () => {
    const { key, company } = await tenantWithCompany();
    const { visit } = await createVisit(t.prisma, company);
    const url = `/v1/visits/${visit.id}?limit=1&since=2026-01-01&page=/pricing`;

    const messages = expectValidationError(await get(key, url), url);

    expect(messages.sort()).toStrictEqual([
      expect.stringMatching(/^property limit should not exist/),
      expect.stringMatching(/^property page should not exist/),
      expect.stringMatching(/^property since should not exist/),
    ]);
  });
});

describe('GET /v1/companies/{id}/visits', () => {
  it("holds the company's visits only", async () => {
    const { workspace, key, company } = await tenantWithCompany();
    const other = await createCompany(t.prisma, workspace.id);
    await seed(company, [
      ['a', 1],
      ['b', 3],
    ]);
    await seed(other, [['c', 2]]);

    const response = await get(key, `/v1/companies/${company.id}/visits`);

    expect(suffixes(workspace, response.body.data)).toStrictEqual(['a', 'b']);
    for (const visit of response.body.data as Json[]) expect(visit.companyId).toBe(company.id);
  });

  it('is an empty page for a company without visits', async () => {
    const { key, company } = await tenantWithCompany();

    const response = await get(key, `/v1/companies/${company.id}/visits`);

    expect(response.status).toBe(200);
    expect(response.body).toStrictEqual({ data: [], nextCursor: null, hasMore: false });
  });

  it('is the one 404 for an unknown company, an impossible id and another workspace’s', async () => {
    const mine = await tenantWithCompany();
    const theirs = await tenantWithCompany();
    await createVisit(t.prisma, theirs.company);

    for (const id of ['co_nobody', theirs.company.id, 'x'.repeat(101)]) {
      const path = `/v1/companies/${id}/visits`;
      expectErrorEnvelope(await get(mine.key, path), {
        status: 404,
        error: 'NOT_FOUND',
        path,
        message: 'Not Found',
      });
    }
  });
});

describe('workspace isolation', () => {
  it("never lists another workspace's visits, whatever the filters", async () => {
    const mine = await tenantWithCompany();
    const theirs = await tenantWithCompany();
    await seed(mine.company, [['mine', 1, { pages: [{ path: '/pricing' }] }]]);
    await seed(theirs.company, [['theirs', 0, { pages: [{ path: '/pricing' }] }]]);

    for (const query of ['', 'page=/pricing', `companyId=${theirs.company.id}`, 'page=/*']) {
      const response = await get(mine.key, `/v1/visits?${query}`);
      expect(response.status).toBe(200);
      for (const visit of response.body.data as Json[]) {
        expect(visit.id).toBe(`${mine.workspace.id}-mine`);
      }
    }
    const ofTheirs = await get(mine.key, `/v1/visits?companyId=${theirs.company.id}`);
    expect(ofTheirs.body.data).toStrictEqual([]);
  });
});

describe('the visits:read scope', () => {
  let tenant: { workspace: Workspace; key: string; company: Company };
  let visitId: string;

  beforeAll(async () => {
    tenant = await tenantWithCompany();
    visitId = (await createVisit(t.prisma, tenant.company)).visit.id;
  });

  const paths = () => [
    '/v1/visits',
    `/v1/visits/${visitId}`,
    `/v1/companies/${tenant.company.id}/visits`,
  ];

  it.each([[['companies:read']], [['companies:read', 'leads:read', 'changes:read']]])(
    'is needed: a key restricted to %j gets the 403 naming it',
    async (scopes) => {
      const { key } = await createApiKey(t.prisma, tenant.workspace.id, { scopes });

      for (const path of paths()) {
        const response = await get(key, path);
        expectErrorEnvelope(response, {
          status: 403,
          error: 'FORBIDDEN',
          path,
          message: 'This key lacks the scope visits:read',
        });
        expect(response.headers['www-authenticate']).toBe(
          'Bearer error="insufficient_scope", scope="visits:read"',
        );
        expect(response.headers['x-ratelimit-limit']).toBeUndefined();
      }
    },
  );

  it.each([[['visits:read']], [[]]])('is enough: a key with %j reads them', async (scopes) => {
    const { key } = await createApiKey(t.prisma, tenant.workspace.id, { scopes });

    for (const path of paths()) expect((await get(key, path)).status).toBe(200);
  });

  it('is answered before the parameters: a bad query without the scope is still the 403', async () => {
    const { key } = await createApiKey(t.prisma, tenant.workspace.id, {
      scopes: ['companies:read'],
    });

    expect((await get(key, '/v1/visits?limit=0')).status).toBe(403);
  });
});

describe('ETags', () => {
  it('answers a matching If-None-Match with 304 on each read, and a 200 once the body changes', async () => {
    const { workspace, key, company } = await tenantWithCompany();
    const { visit } = await createVisit(t.prisma, company, { startedAt: hoursBefore(2) });
    const paths = [
      '/v1/visits',
      '/v1/visits?limit=1&fields=startedAt',
      `/v1/visits/${visit.id}`,
      `/v1/companies/${company.id}/visits`,
    ];

    const etags: string[] = [];
    for (const path of paths) {
      const first = await get(key, path);
      expect(first.status).toBe(200);
      const etag = first.headers.etag;
      expect(etag).toMatch(/^W\/"[A-Za-z0-9_-]{27}"$/);
      const again = await get(key, path).set('If-None-Match', etag);
      expect(again.status).toBe(304);
      expect(again.text).toBe('');
      expect(again.headers.etag).toBe(etag);
      etags.push(etag);
    }
    // Each request has its own.
    expect(new Set(etags).size).toBe(paths.length);

    // A newer visit changes the lists' bodies, not the visit's: only its ETag still matches.
    await createVisit(t.prisma, company, {
      id: `${workspace.id}-newer`,
      startedAt: hoursBefore(1),
    });
    const statuses = [];
    for (const [i, path] of paths.entries()) {
      statuses.push((await get(key, path).set('If-None-Match', etags[i])).status);
    }
    expect(statuses).toStrictEqual([200, 200, 304, 200]);
  });
});

describe('a bad request', () => {
  it('is one 400 naming every violation, one entry each', async () => {
    const { key } = await tenantWithCompany();
    const url =
      '/v1/visits?limit=0&since=2026-02-01&until=2026-01-01&page=pricing&companyId=&foo=1&fields=colour';

    const messages = expectValidationError(await get(key, url), url);

    expect(messages).toHaveLength(6);
    expect(messages).toEqual(
      expect.arrayContaining([
        'companyId has an invalid id "": give company ids of 1 to 100 characters, comma-separated',
        expect.stringMatching(/^fields has an unknown name "colour": /),
        'limit must not be less than 1',
        'page has an invalid pattern "pricing": it must start with /',
        'property foo should not exist',
        'until must be after since',
      ]),
    );
  });
});

import fc from 'fast-check';
import { createTestApp, type TestApp } from '../../support/app';
import { companyRow, daysAgo } from '../../support/factories';
import { propertyOptions } from '../../support/fast-check';
import { createTenant, encodeAll, getWithKey } from '../../support/http';

/*
 * The visits' reads against an oracle, on generated visits (docs/visits.md): GET /v1/visits and
 * GET /v1/companies/{id}/visits with generated windows (`since`, `until`), `companyId`, page
 * patterns (exact and prefix, odd and percent-encoded paths, sent encoded in several ways) and
 * `fields`, paged by cursor at every limit from 1 to 4 and at the default; the same paging while
 * visits arrive between pages; and GET /v1/companies by `visitedPage` and `visitedSince` with
 * another filter, its exact `total` and its order.
 *
 * The oracle is this file's: the visits as the test generated them, filtered, sorted and cut into
 * pages here (no code of src/ is used to match a pattern or to order), the patterns read back from
 * the query string by WHATWG URLSearchParams, as the server must decode them once.
 */

jest.setTimeout(180_000);

type Json = Record<string, unknown>;

let t: TestApp;

beforeAll(async () => {
  // Hundreds of requests with one key per property: the rate limit is not the subject.
  t = await createTestApp({ env: { RATE_LIMIT_PER_MINUTE: '1000000' } });
});

afterAll(async () => {
  await t.close();
});

const SECOND = 1000;
const HOUR = 60 * 60 * SECOND;
const DAY = 24 * HOUR;

/** A whole second two days ago: every generated visit starts at or just before it. */
const T = Math.floor(daysAgo(2).getTime() / SECOND) * SECOND;

// ---- The generated data -----------------------------------------------------------------------

/*
 * Few distinct instants, a millisecond apart for some, so that ties (ordered by id) are common and
 * a window or a cursor that cuts a millisecond off shows. The ids' characters make the byte order
 * of UTF-8 differ from JavaScript's code-unit order (`Ａ` U+FF21 sorts before `😀` in bytes, after
 * it in UTF-16), and upper case sort before lower case.
 */
const INSTANTS = [T, T - 1, T - SECOND, T - 60 * SECOND, T - 60 * SECOND - 1];
const ID_CHARACTERS = ['a', 'b', 'B', '0', '9', '-', '~', ' ', 'é', 'Ａ', '😀'];
const COMPANY_SUFFIXES = ['a', 'B', 'a b', 'é', 'Ａ', '😀'];
// A page viewed a day after its visit started: the longest a visit may last.
const PAGE_OFFSETS = [0, 1, 60 * SECOND, DAY];

/**
 * Stored paths as a tracker sends them: case and percent-encoding kept (`/caf%C3%A9` and
 * `/caf%c3%a9` are two paths, and `/café` a third), a comma, a space, a `+`, a `*`, characters
 * outside the BMP.
 */
const PATHS = [
  '/',
  '/pricing',
  '/Pricing',
  '/pricing/',
  '/pricing/team',
  '/blog',
  '/blog/',
  '/blog/a',
  '/blog/A',
  '/blog/a,b',
  '/blogs',
  '/blog%2Fa',
  '/caf%C3%A9',
  '/caf%c3%a9',
  '/café',
  '/a b',
  '/a+b',
  '/a%20b',
  '/~user',
  '/%7Euser',
  '/x*y',
  '/😀',
  '/Ａ',
];

type IntentLevel = 'hot' | 'warm' | 'cold';
const INTENT_LEVELS: IntentLevel[] = ['hot', 'warm', 'cold'];

interface CompanyPlan {
  suffix: string;
  intentScore: number;
  intentLevel: IntentLevel;
}

interface VisitPlan {
  suffix: string;
  company: number;
  instant: number;
  /** Each page's time after the visit's start; sorted, so that positions follow viewedAt. */
  pages: { path: string; offset: number; title: string | null }[];
  /** How much longer than its last page the visit lasted (within 24 hours). */
  tail: number;
  deviceType: 'desktop' | 'mobile' | 'tablet' | 'other';
  country: string | null;
  source: string | null;
  /** For the paging while visits arrive: after which page it arrives, and whether newer than all. */
  arrival?: { afterPage: number; newest: boolean };
}

interface Plan {
  companies: CompanyPlan[];
  visits: VisitPlan[];
}

/** Undefined two times in three: each filter applies to some reads, all of them to few. */
const sometimes = <T>(arbitrary: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> =>
  fc.oneof({ weight: 2, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary });

/**
 * Companies and their visits: at least `companies` companies, `visits` visits, one visit in
 * `arrivalsOneIn` planned to arrive while a list is paged (else written before the first read).
 */
const planArbitrary = ({
  companies = 1,
  visits = 3,
  arrivalsOneIn = 3,
}: { companies?: number; visits?: number; arrivalsOneIn?: number } = {}): fc.Arbitrary<Plan> =>
  fc.record({
    companies: fc.uniqueArray(
      fc.record({
        suffix: fc.constantFrom(...COMPANY_SUFFIXES),
        // Ties on the score: the companies list orders them by id.
        intentScore: fc.constantFrom(90, 70, 40),
        intentLevel: fc.constantFrom(...INTENT_LEVELS),
      }),
      { selector: (company) => company.suffix, minLength: companies, maxLength: 5 },
    ),
    visits: fc.uniqueArray(
      fc.record({
        suffix: fc.string({ unit: fc.constantFrom(...ID_CHARACTERS), minLength: 1, maxLength: 3 }),
        company: fc.nat(4),
        instant: fc.constantFrom(...INSTANTS),
        pages: fc
          .array(
            fc.record({
              path: fc.constantFrom(...PATHS),
              offset: fc.constantFrom(...PAGE_OFFSETS),
              title: fc.constantFrom('A page', null),
            }),
            { minLength: 1, maxLength: 3 },
          )
          .map((pages) => [...pages].sort((a, b) => a.offset - b.offset)),
        tail: fc.constantFrom(0, 999, 30 * SECOND),
        deviceType: fc.constantFrom('desktop', 'mobile', 'tablet', 'other'),
        country: fc.constantFrom('FR', 'DE', null),
        source: fc.constantFrom('newsletter', null),
        arrival: fc.oneof(
          { weight: arrivalsOneIn - 1, arbitrary: fc.constant(undefined) },
          {
            weight: 1,
            arbitrary: fc.record({
              afterPage: fc.integer({ min: 1, max: 2 }),
              newest: fc.boolean(),
            }),
          },
        ),
      }),
      { selector: (visit) => visit.suffix, minLength: visits, maxLength: 12 },
    ),
  });

/** A page view as the API shows it. */
interface PageView {
  hostname: string;
  path: string;
  title: string | null;
  viewedAt: number;
  secondsOnPage: number | null;
}

/** A visit of the oracle: what the test wrote. */
interface Visit {
  id: string;
  companyId: string;
  startedAt: number;
  endedAt: number;
  deviceType: VisitPlan['deviceType'];
  country: string | null;
  source: string | null;
  pages: PageView[];
  arrival?: VisitPlan['arrival'];
}

interface Company {
  id: string;
  intentScore: number;
  intentLevel: IntentLevel;
}

interface Dataset {
  workspaceId: string;
  key: string;
  companies: Company[];
  visits: Visit[];
}

/** The plan's rows in a workspace of their own; newer-than-all arrivals start an hour after T. */
function materialize(workspaceId: string, key: string, plan: Plan): Dataset {
  const companies = plan.companies.map((company) => ({
    id: `${workspaceId}-${company.suffix}`,
    intentScore: company.intentScore,
    intentLevel: company.intentLevel,
  }));
  const visits = plan.visits.map((visit): Visit => {
    const startedAt = visit.arrival?.newest ? T + HOUR : visit.instant;
    const last = visit.pages.at(-1)!.offset;
    return {
      id: `${workspaceId}-${visit.suffix}`,
      companyId: companies[visit.company % companies.length].id,
      startedAt,
      endedAt: startedAt + Math.min(last + visit.tail, DAY),
      deviceType: visit.deviceType,
      country: visit.country,
      source: visit.source,
      pages: visit.pages.map((page, position) => ({
        hostname: 'www.example.com',
        path: page.path,
        title: page.title,
        viewedAt: startedAt + page.offset,
        secondsOnPage: position === visit.pages.length - 1 ? null : 30,
      })),
      arrival: visit.arrival,
    };
  });
  return { workspaceId, key, companies, visits };
}

async function insertCompanies(data: Dataset): Promise<void> {
  await t.prisma.company.createMany({
    data: data.companies.map((company) => companyRow(data.workspaceId, company)),
  });
}

/**
 * The visits and their page views in one transaction of two statements, as createVisit
 * (test/support/factories.ts) writes one: the months made first, each page at its position.
 */
async function insertVisits(data: Dataset, visits: Visit[]): Promise<void> {
  if (visits.length === 0) return;
  const starts = visits.map((visit) => visit.startedAt);
  await t.prisma
    .$queryRaw`SELECT visit_partitions_make(${new Date(Math.min(...starts))}::timestamptz, ${new Date(Math.max(...starts))}::timestamptz)`;
  await t.prisma.$transaction([
    t.prisma.visit.createMany({
      data: visits.map((visit) => ({
        id: visit.id,
        workspaceId: data.workspaceId,
        companyId: visit.companyId,
        startedAt: new Date(visit.startedAt),
        endedAt: new Date(visit.endedAt),
        pageViewCount: visit.pages.length,
        landingPage: visit.pages[0].path,
        deviceType: visit.deviceType,
        country: visit.country,
        source: visit.source,
      })),
    }),
    t.prisma.pageView.createMany({
      data: visits.flatMap((visit) =>
        visit.pages.map((page, position) => ({
          workspaceId: data.workspaceId,
          visitId: visit.id,
          visitStartedAt: new Date(visit.startedAt),
          position,
          companyId: visit.companyId,
          hostname: page.hostname,
          path: page.path,
          title: page.title,
          viewedAt: new Date(page.viewedAt),
          secondsOnPage: page.secondsOnPage,
        })),
      ),
    }),
  ]);
}

/** A new workspace with the plan's companies and its visits (arrivals included unless `held`). */
async function seed(plan: Plan, held = false): Promise<Dataset> {
  const { workspace, key } = await createTenant(t.prisma);
  const data = materialize(workspace.id, key, plan);
  await insertCompanies(data);
  await insertVisits(
    data,
    data.visits.filter((visit) => !held || visit.arrival === undefined),
  );
  return data;
}

// ---- The generated queries --------------------------------------------------------------------

/**
 * The text as a hand-written URL has it: printable ASCII as is, `%` included (so that `%C3%A9`
 * arrives decoded, `é`), a space as `+` (and a `+` arrives as a space), `&` encoded. Only for a
 * text whose `%`s all start valid UTF-8 escapes: anything else is encoded by encodeURIComponent.
 */
function asTyped(text: string): string {
  let valid = true;
  try {
    decodeURIComponent(text);
  } catch {
    valid = false;
  }
  if (!valid) return encodeURIComponent(text);
  return [...text]
    .map((character) => {
      if (character === ' ') return '+';
      if (character === '&') return '%26';
      return /^[\x21-\x7e]$/.test(character) ? character : encodeURIComponent(character);
    })
    .join('');
}

const ENCODINGS = { encodeURIComponent, encodeAll, asTyped };
type Encoding = keyof typeof ENCODINGS;

/**
 * A page pattern of a stored path: the path exactly, or (`cut` given) a prefix of it, cut after
 * any code point, with `*`. Never a comma, nor a `*` before the end: those would be other patterns,
 * or a 400, which visits.e2e-spec.ts covers; a path that holds one is cut before it.
 */
function patternOf(path: string, cut?: number): string {
  const characters = [...path];
  const stop = characters.findIndex((character) => character === ',' || character === '*');
  if (cut === undefined && stop === -1) return path;
  const end = Math.min(
    cut === undefined ? characters.length : 1 + (cut % characters.length),
    stop === -1 ? characters.length : stop,
  );
  return `${characters.slice(0, end).join('')}*`;
}

const cutArbitrary = fc.option(fc.nat(12), { nil: undefined });

/** A pattern of a path of the vocabulary, or one that matches nothing or everything. */
const patternArbitrary = fc
  .oneof(
    { weight: 7, arbitrary: fc.tuple(fc.constantFrom(...PATHS), cutArbitrary) },
    { weight: 1, arbitrary: fc.constantFrom('/nowhere', '/BLOG*', '/*', '/blog/*') },
  )
  .map((pattern) => (typeof pattern === 'string' ? pattern : patternOf(...pattern)));

const FIELD_NAMES = [
  'companyId',
  'startedAt',
  'endedAt',
  'durationSeconds',
  'pageViewCount',
  'landingPage',
  'referrer',
  'source',
  'deviceType',
  'country',
  'pages',
  'pages.path',
  'pages.viewedAt',
  'pages.secondsOnPage',
];

interface QueryPlan {
  patterns?: { texts: string[]; encoding: Encoding; join: ',' | '%2C' | 'repeat' };
  /** Indexes into INSTANTS, and a millisecond either side. */
  since?: [number, number];
  until?: [number, number];
  /** Indexes into the companies (GET /v1/visits only), and whether an unknown id comes too. */
  companies?: { picks: number[]; unknown: boolean };
  fields?: { names: string[]; repeat: boolean };
}

const instantArbitrary = fc.tuple(fc.nat(INSTANTS.length - 1), fc.constantFrom(-1, 0, 1));

const patternsArbitrary = fc.record({
  texts: fc.array(patternArbitrary, { minLength: 1, maxLength: 3 }),
  encoding: fc.constantFrom<Encoding>('encodeURIComponent', 'encodeAll', 'asTyped'),
  join: fc.constantFrom<',' | '%2C' | 'repeat'>(',', '%2C', 'repeat'),
});
const companiesArbitrary = fc.record({
  picks: fc.array(fc.nat(4), { minLength: 1, maxLength: 2 }),
  unknown: fc.boolean(),
});

const queryArbitrary: fc.Arbitrary<QueryPlan> = fc.record({
  patterns: sometimes(patternsArbitrary),
  since: sometimes(instantArbitrary),
  until: sometimes(instantArbitrary),
  companies: sometimes(companiesArbitrary),
  fields: sometimes(
    fc.record({
      names: fc.uniqueArray(fc.constantFrom(...FIELD_NAMES), { minLength: 1, maxLength: 4 }),
      repeat: fc.boolean(),
    }),
  ),
});

/** One filter at most, for the paging while visits arrive: a page or two of visits, most times. */
const arrivalQueryArbitrary: fc.Arbitrary<QueryPlan> = fc.oneof(
  { weight: 4, arbitrary: fc.constant({}) },
  fc.record({ patterns: patternsArbitrary }),
  fc.record({ companies: companiesArbitrary }),
);

/** A read of a visit list: its path and query (no limit, no cursor), and what it must keep. */
interface Read {
  path: string;
  query: string;
  since?: number;
  until?: number;
  companyIds?: string[];
  patterns?: string[];
  fields?: string[];
}

const at = ([index, shift]: [number, number]) => INSTANTS[index] + shift;

/**
 * The query string of the plan, and what the oracle reads of it. `ofCompany`: the read is
 * GET /v1/companies/{id}/visits of that company, which takes no `companyId`.
 */
function readOf(data: Dataset, plan: QueryPlan, ofCompany?: Company): Read {
  const parts: string[] = [];
  const read: Read = {
    path: ofCompany ? `/v1/companies/${encodeURIComponent(ofCompany.id)}/visits` : '/v1/visits',
    query: '',
  };
  if (plan.patterns) {
    const encode = ENCODINGS[plan.patterns.encoding];
    const encoded = plan.patterns.texts.map(encode);
    if (plan.patterns.join === 'repeat') parts.push(...encoded.map((text) => `page=${text}`));
    else parts.push(`page=${encoded.join(plan.patterns.join)}`);
  }
  const since = plan.since && at(plan.since);
  let until = plan.until && at(plan.until);
  // `until` must be after `since` (a 400 otherwise, pinned elsewhere): the later one is dropped.
  if (since !== undefined && until !== undefined && until <= since) until = undefined;
  if (since !== undefined) parts.push(`since=${new Date(since).toISOString()}`);
  if (until !== undefined) parts.push(`until=${new Date(until).toISOString()}`);
  read.since = since;
  read.until = until;
  if (ofCompany) {
    read.companyIds = [ofCompany.id];
  } else if (plan.companies) {
    const ids = plan.companies.picks.map((pick) => data.companies[pick % data.companies.length].id);
    if (plan.companies.unknown) ids.push(`${data.workspaceId}-nobody`);
    parts.push(`companyId=${ids.map(encodeURIComponent).join(',')}`);
    read.companyIds = ids;
  }
  if (plan.fields) {
    const { names, repeat } = plan.fields;
    parts.push(...(repeat ? names.map((name) => `fields=${name}`) : [`fields=${names.join(',')}`]));
    read.fields = names;
  }
  read.query = parts.join('&');
  // The patterns as the server must see them: the query decoded once, then split at commas.
  const pages = new URLSearchParams(read.query).getAll('page');
  if (pages.length > 0) read.patterns = pages.flatMap((value) => value.split(','));
  return read;
}

// ---- The oracle -------------------------------------------------------------------------------

/** docs/visits.md, "Page patterns": exact byte for byte, or a prefix before a final `*`. */
function pathMatches(path: string, pattern: string): boolean {
  if (!pattern.endsWith('*')) return path === pattern;
  const prefix = pattern.slice(0, -1);
  return path.length >= prefix.length && path.slice(0, prefix.length) === prefix;
}

function keeps(read: Read, visit: Visit): boolean {
  if (read.since !== undefined && visit.startedAt < read.since) return false;
  if (read.until !== undefined && visit.startedAt >= read.until) return false;
  if (read.companyIds && !read.companyIds.includes(visit.companyId)) return false;
  if (read.patterns) {
    const patterns = read.patterns;
    return visit.pages.some((page) => patterns.some((pattern) => pathMatches(page.path, pattern)));
  }
  return true;
}

const bytes = (text: string) => Buffer.from(text, 'utf8');

/** The lists' order: startedAt descending, ties by id descending, ids compared byte by byte. */
function newestFirst(a: Visit, b: Visit): number {
  return b.startedAt - a.startedAt || Buffer.compare(bytes(b.id), bytes(a.id));
}

/** Whether the visit comes after the position in that order. */
const isAfter = (visit: Visit, position: Visit) => newestFirst(position, visit) < 0;

/** A visit as docs/visits.md states it, every field in its order, its derived ones computed. */
function visitJson(visit: Visit): Json {
  return {
    id: visit.id,
    companyId: visit.companyId,
    startedAt: new Date(visit.startedAt).toISOString(),
    endedAt: new Date(visit.endedAt).toISOString(),
    durationSeconds: Math.floor((visit.endedAt - visit.startedAt) / SECOND),
    pageViewCount: visit.pages.length,
    landingPage: visit.pages[0].path,
    referrer: null,
    source: visit.source,
    medium: null,
    campaign: null,
    term: null,
    content: null,
    deviceType: visit.deviceType,
    country: visit.country,
    pages: visit.pages.map((page) => ({
      hostname: page.hostname,
      path: page.path,
      title: page.title,
      viewedAt: new Date(page.viewedAt).toISOString(),
      secondsOnPage: page.secondsOnPage,
    })),
  };
}

/**
 * The visit with `fields`: the fields named and the id, in the visit's order; the pages whole when
 * `pages` is named, else each with just the `pages.<field>` named (a page has no id), else none.
 */
function selected(visit: Json, names: string[] | undefined): Json {
  if (names === undefined) return visit;
  const pageFields = names.filter((name) => name.startsWith('pages.')).map((name) => name.slice(6));
  const kept: Json = {};
  for (const [name, value] of Object.entries(visit)) {
    if (name === 'id' || names.includes(name)) {
      kept[name] = value;
    } else if (name === 'pages' && pageFields.length > 0) {
      kept.pages = (value as Json[]).map((page) =>
        Object.fromEntries(Object.entries(page).filter(([field]) => pageFields.includes(field))),
      );
    }
  }
  return kept;
}

// ---- Reading ----------------------------------------------------------------------------------

interface Page {
  data: Json[];
  nextCursor: string | null;
  hasMore: boolean;
}

async function getPage(data: Dataset, read: Read, limit?: number, cursor?: string): Promise<Page> {
  const query = [
    read.query,
    limit === undefined ? '' : `limit=${limit}`,
    cursor === undefined ? '' : `cursor=${encodeURIComponent(cursor)}`,
  ]
    .filter((part) => part !== '')
    .join('&');
  const url = query === '' ? read.path : `${read.path}?${query}`;
  const response = await getWithKey(t.app, url, data.key);
  // Labelled, so that a failure names the request.
  expect({ url, status: response.status }).toStrictEqual({ url, status: 200 });
  const page = response.body as Page;
  expect(Object.keys(page)).toStrictEqual(['data', 'nextCursor', 'hasMore']);
  // A string exactly when there is more.
  expect({ url, cursorIsText: typeof page.nextCursor === 'string' }).toStrictEqual({
    url,
    cursorIsText: page.hasMore,
  });
  return page;
}

const ids = (items: readonly { id?: unknown }[]) => items.map((item) => item.id as string);

/**
 * Every page of the read at `limit` (the default when undefined), each compared with the
 * oracle's: the visits after the previous page's last one, `limit` of them, every field as
 * selected and in its order.
 */
async function expectPagedAsOracle(data: Dataset, read: Read, limit?: number): Promise<void> {
  const expected = data.visits.filter((visit) => keeps(read, visit)).sort(newestFirst);
  const size = limit ?? 50;
  let cursor: string | undefined;
  for (let start = 0; ; start += size) {
    const page = await getPage(data, read, limit, cursor);
    const want = expected.slice(start, start + size);
    const context = { path: read.path, query: read.query, limit, start };
    expect({ ...context, ids: ids(page.data) }).toStrictEqual({ ...context, ids: ids(want) });
    const json = want.map((visit) => selected(visitJson(visit), read.fields));
    expect(page.data).toStrictEqual(json);
    // Key order too: the contract's order of the fields.
    expect(JSON.stringify(page.data)).toBe(JSON.stringify(json));
    expect({ ...context, hasMore: page.hasMore }).toStrictEqual({
      ...context,
      hasMore: start + size < expected.length,
    });
    if (!page.hasMore) return;
    cursor = page.nextCursor!;
  }
}

// ---- The properties ---------------------------------------------------------------------------

const LIMITS = [1, 2, 3, 4, undefined];

/*
 * Two reads that every run makes besides the generated ones, so that what the counts below ask
 * for does not depend on the draw (generated plans are small more often than not): a plan of
 * more visits than LIMITS, read without a filter (several pages at every limit), and with a
 * pattern that one visit's page matches and no other's.
 */
const [widePlan] = fc.sample(planArbitrary({ visits: LIMITS.length + 1 }), { seed: 1, numRuns: 1 });
const onePricingVisit: Plan = {
  companies: widePlan.companies,
  visits: widePlan.visits.map((visit, index) => ({
    ...visit,
    pages: [{ path: index === 0 ? '/pricing' : '/blog', offset: 0, title: null }],
    arrival: undefined,
  })),
};
const pricingOnly: QueryPlan = {
  patterns: { texts: ['/pricing'], encoding: 'asTyped', join: ',' },
};
const EXAMPLES: [Plan, QueryPlan, number][] = [
  [onePricingVisit, {}, 0],
  [onePricingVisit, pricingOnly, 0],
];

describe('the visit lists against the oracle', () => {
  it('keep, order, select and page by cursor, at every limit, the visits the oracle does', async () => {
    // How many reads had patterns that kept some visits but not all; more visits than LIMITS.
    let patternsThatCut = 0;
    let severalPages = 0;
    await fc.assert(
      fc.asyncProperty(planArbitrary(), queryArbitrary, fc.nat(4), async (plan, query, pick) => {
        const data = await seed(plan);
        const company = data.companies[pick % data.companies.length];
        for (const read of [readOf(data, query), readOf(data, query, company)]) {
          const kept = data.visits.filter((visit) => keeps(read, visit)).length;
          if (read.patterns && kept > 0 && kept < data.visits.length) patternsThatCut++;
          if (kept > LIMITS.length) severalPages++;
          for (const limit of LIMITS) await expectPagedAsOracle(data, read, limit);
        }
      }),
      // The examples run first and count as runs: twenty generated ones besides.
      { ...propertyOptions(20 + EXAMPLES.length), examples: EXAMPLES },
    );

    // The reads are not all empty or all everything.
    expect(patternsThatCut).toBeGreaterThan(0);
    expect(severalPages).toBeGreaterThan(0);
  });

  /*
   * The documented rule (docs/visits.md, "The page"): a cursor is a position (a visit's startedAt
   * and id), and the next page holds the visits after it in the order that match the filters, as
   * they are when it is read. So a visit that arrives between pages shows in a later page exactly
   * when it sorts after the position reached; one newer than the first page (as arriving visits
   * are) never does; and every visit there was from the start comes exactly once.
   */
  it('page each visit exactly once while visits arrive between pages, newer ones never', async () => {
    let arrivalsSeen = 0;
    let newerHeldOut = 0;
    await fc.assert(
      fc.asyncProperty(
        planArbitrary({ visits: 8, arrivalsOneIn: 2 }),
        arrivalQueryArbitrary,
        fc.integer({ min: 1, max: 2 }),
        sometimes(fc.nat(4)),
        async (plan, query, limit, pick) => {
          const data = await seed(plan, true);
          const company =
            pick === undefined ? undefined : data.companies[pick % data.companies.length];
          const read = readOf(data, { ...query, fields: undefined }, company);
          const present = data.visits.filter((visit) => visit.arrival === undefined);
          const atStart = present.filter((visit) => keeps(read, visit)).map((visit) => visit.id);
          const seen: string[] = [];
          let first: Visit | undefined;
          let position: Visit | undefined;
          let cursor: string | undefined;
          for (let number = 1; ; number++) {
            const remaining = present
              .filter((visit) => keeps(read, visit) && (!position || isAfter(visit, position)))
              .sort(newestFirst);
            const want = remaining.slice(0, limit);
            const page = await getPage(data, read, limit, cursor);
            const context = { query: read.query, path: read.path, limit, number };
            expect({ ...context, ids: ids(page.data) }).toStrictEqual({
              ...context,
              ids: ids(want),
            });
            expect({ ...context, hasMore: page.hasMore }).toStrictEqual({
              ...context,
              hasMore: remaining.length > limit,
            });
            seen.push(...ids(page.data));
            first ??= want[0];
            if (!page.hasMore) break;
            position = want.at(-1);
            cursor = page.nextCursor!;
            const arriving = data.visits.filter((visit) => visit.arrival?.afterPage === number);
            await insertVisits(data, arriving);
            present.push(...arriving);
          }
          // Each visit once; every one there from the start; none newer than the first page.
          expect(new Set(seen).size).toBe(seen.length);
          expect(seen).toEqual(expect.arrayContaining(atStart));
          const arrived = data.visits.filter((visit) => visit.arrival && present.includes(visit));
          const newer = arrived.filter((visit) => first && newestFirst(visit, first) < 0);
          expect(seen.filter((id) => newer.some((visit) => visit.id === id))).toStrictEqual([]);
          if (arrived.some((visit) => seen.includes(visit.id))) arrivalsSeen++;
          if (newer.some((visit) => keeps(read, visit))) newerHeldOut++;
        },
      ),
      propertyOptions(20),
    );

    // Some histories had an arrival in a later page, some a matching newer one left out.
    expect(arrivalsSeen).toBeGreaterThan(0);
    expect(newerHeldOut).toBeGreaterThan(0);
  });
});

// ---- Companies by the pages they viewed -------------------------------------------------------

interface CompaniesQueryPlan {
  patterns: { texts: string[]; encoding: Encoding };
  /** A pattern of a path of the data too: its index in the visits and pages, and a cut. */
  ownPattern: [number, number, number | undefined];
  /** A page view's time of the data (its index in the visits and pages, and a shift), or none. */
  visitedSince?: [number, number, number];
  other?: { intentLevel: IntentLevel[] } | { minIntentScore: number };
  limit: number;
  offset: number;
}

const companiesQueryArbitrary: fc.Arbitrary<CompaniesQueryPlan> = fc.record(
  {
    patterns: fc.record({
      texts: fc.array(patternArbitrary, { minLength: 1, maxLength: 3 }),
      encoding: fc.constantFrom<Encoding>('encodeURIComponent', 'encodeAll', 'asTyped'),
    }),
    ownPattern: fc.tuple(fc.nat(11), fc.nat(2), cutArbitrary),
    visitedSince: fc.tuple(fc.nat(9), fc.nat(2), fc.constantFrom(-1, 0, 1)),
    other: fc.oneof(
      fc.record({
        intentLevel: fc.uniqueArray(fc.constantFrom(...INTENT_LEVELS), {
          minLength: 1,
          maxLength: 2,
        }),
      }),
      fc.record({ minIntentScore: fc.constantFrom(40, 70, 70.5, 90) }),
    ),
    limit: fc.integer({ min: 1, max: 5 }),
    offset: fc.constantFrom(0, 0, 0, 1),
  },
  { requiredKeys: ['patterns', 'ownPattern', 'limit', 'offset'] },
);

/** The companies list's order: intentScore descending, ties by id ascending, byte by byte. */
function hottestFirst(a: Company, b: Company): number {
  return b.intentScore - a.intentScore || Buffer.compare(bytes(a.id), bytes(b.id));
}

describe('GET /v1/companies by visitedPage against the oracle', () => {
  it('keeps, counts and orders the companies that viewed a matching page since visitedSince', async () => {
    let severalCompanies = 0;
    await fc.assert(
      fc.asyncProperty(
        planArbitrary({ companies: 2 }),
        companiesQueryArbitrary,
        async (plan, query) => {
          const data = await seed(plan);
          const page = ([v, p]: [number, number, ...unknown[]]) => {
            const visit = data.visits[v % data.visits.length];
            return visit.pages[p % visit.pages.length];
          };
          const texts = [...query.patterns.texts];
          texts.push(patternOf(page(query.ownPattern).path, query.ownPattern[2]));
          const encode = ENCODINGS[query.patterns.encoding];
          const parts = [`visitedPage=${texts.map(encode).join(',')}`];
          // Without visitedSince, 30 days before the request: every generated page view is in it.
          let since = -Infinity;
          if (query.visitedSince) {
            since = page(query.visitedSince).viewedAt + query.visitedSince[2];
            parts.push(`visitedSince=${new Date(since).toISOString()}`);
          }
          let keepOther: (company: Company) => boolean = () => true;
          if (query.other && 'intentLevel' in query.other) {
            const levels = query.other.intentLevel;
            parts.push(`intentLevel=${levels.join(',')}`);
            keepOther = (company) => levels.includes(company.intentLevel);
          } else if (query.other) {
            const min = query.other.minIntentScore;
            parts.push(`minIntentScore=${min}`);
            keepOther = (company) => company.intentScore >= min;
          }
          parts.push(`limit=${query.limit}`, `offset=${query.offset}`);
          const url = `/v1/companies?${parts.join('&')}`;
          const patterns = new URLSearchParams(url.slice(url.indexOf('?')))
            .getAll('visitedPage')
            .flatMap((value) => value.split(','));

          const viewed = (company: Company) =>
            data.visits.some(
              (visit) =>
                visit.companyId === company.id &&
                visit.pages.some(
                  (page) =>
                    page.viewedAt >= since &&
                    patterns.some((pattern) => pathMatches(page.path, pattern)),
                ),
            );
          const expected = data.companies
            .filter((company) => viewed(company) && keepOther(company))
            .sort(hottestFirst)
            .map((company) => company.id);

          if (expected.length >= 2) severalCompanies++;
          const response = await getWithKey(t.app, url, data.key);

          expect({ url, status: response.status }).toStrictEqual({ url, status: 200 });
          expect({
            url,
            total: response.body.total as number,
            ids: ids(response.body.data as Json[]),
          }).toStrictEqual({
            url,
            total: expected.length,
            ids: expected.slice(query.offset, query.offset + query.limit),
          });
        },
      ),
      propertyOptions(25),
    );

    expect(severalCompanies).toBeGreaterThan(0);
  });
});

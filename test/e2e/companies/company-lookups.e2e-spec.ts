import fc from 'fast-check';
import { createTestApp, type TestApp } from '../../support/app';
import { createApiKey, createCompany, createWorkspace } from '../../support/factories';
import { propertyOptions } from '../../support/fast-check';
import { byteOrder, runTag, score } from '../../support/generated-data';
import { expectValidationError, getWithKey } from '../../support/http';

/*
 * The companies list's lookups (docs/api.md, "Lookups"): over generated companies and generated
 * queries, `domain` and `q` keep exactly the companies that an independent reading of the
 * contract keeps, in the list's order, with an exact `total`, combined with the other filters;
 * names and domains hold accents in both cases, `%`, `_`, `\` and spaces, matched as themselves.
 */
const RUNS = 40;

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({ env: { RATE_LIMIT_PER_MINUTE: '1000000' } });
});

afterAll(async () => {
  await t.close();
});

/** Case as the contract folds it: Unicode lower case (the test database's is a UTF-8 locale). */
const fold = (text: string): string => text.toLowerCase();
/** A domain as `domain=` compares it: case aside, without a leading `www.` nor a trailing dot. */
const domainKey = (domain: string): string => fold(domain).replace(/^www\.|\.$/g, '');

interface Row {
  name: string;
  domain: string;
  intentScore: number;
}

interface Lookup {
  q?: string;
  domain?: string[];
  minIntentScore?: number;
}

function matches(row: Row, lookup: Lookup): boolean {
  const { q, domain, minIntentScore } = lookup;
  return (
    (q === undefined || fold(row.name).includes(fold(q)) || fold(row.domain).includes(fold(q))) &&
    (domain === undefined || domain.map(domainKey).includes(domainKey(row.domain))) &&
    (minIntentScore === undefined || row.intentScore >= minIntentScore)
  );
}

// Few distinct characters, so that substrings recur: both cases of accented letters, LIKE's
// wildcards and escape, and a space.
const NAME_UNITS = [...'aAbB1 %_\\', 'é', 'É', 'ü', 'Ü'];
const LABEL_UNITS = [...'aAbB1-_', 'é', 'É'];

const name = fc.string({ unit: fc.constantFrom(...NAME_UNITS), minLength: 1, maxLength: 10 });
const label = fc.string({ unit: fc.constantFrom(...LABEL_UNITS), minLength: 1, maxLength: 4 });
const domain = fc
  .tuple(fc.boolean(), fc.array(label, { minLength: 1, maxLength: 3 }), fc.boolean())
  .map(([www, labels, dot]) => `${www ? 'www.' : ''}${labels.join('.')}${dot ? '.' : ''}`);
const companyRow = fc.record({ name, domain, intentScore: score });

/** Some characters of `text` in the other case. */
const recased = (text: string): fc.Arbitrary<string> =>
  fc
    .array(fc.boolean(), { minLength: text.length, maxLength: text.length })
    .map((flips) =>
      [...text]
        .map((c, i) => (flips[i] ? (c === fold(c) ? c.toUpperCase() : fold(c)) : c))
        .join(''),
    );

/** A `q`: part of a stored name or domain in another case, or any text of 3 to 6 characters. */
function qFor(rows: Row[]): fc.Arbitrary<string> {
  const texts = rows.flatMap((row) => [row.name, row.domain]).filter((text) => text.length >= 3);
  const any = fc.string({ unit: fc.constantFrom(...NAME_UNITS), minLength: 3, maxLength: 6 });
  if (texts.length === 0) return any;
  const part = fc
    .constantFrom(...texts)
    .chain((text) =>
      fc
        .integer({ min: 0, max: text.length - 3 })
        .chain((start) =>
          fc
            .integer({ min: start + 3, max: text.length })
            .chain((end) => recased(text.slice(start, end))),
        ),
    );
  return fc.oneof(part, any);
}

/** A `domain` value: a stored domain written otherwise (case, `www.`, trailing dot), or another. */
function domainFor(rows: Row[]): fc.Arbitrary<string> {
  if (rows.length === 0) return domain;
  const variant = fc
    .tuple(fc.constantFrom(...rows.map((row) => domainKey(row.domain))), fc.boolean(), fc.boolean())
    .filter(([key]) => key !== '')
    .chain(([key, www, dot]) => recased(`${www ? 'www.' : ''}${key}${dot ? '.' : ''}`));
  return fc.oneof(variant, domain);
}

const lookupFor = (rows: Row[]): fc.Arbitrary<Lookup> =>
  fc.record(
    {
      q: qFor(rows),
      domain: fc.array(domainFor(rows), { minLength: 1, maxLength: 3 }),
      minIntentScore: fc.constantFrom(0, 50, 99.999),
    },
    { requiredKeys: [] },
  );

function queryOf(lookup: Lookup): string {
  const parts: string[] = [];
  if (lookup.q !== undefined) parts.push(`q=${encodeURIComponent(lookup.q)}`);
  if (lookup.domain) parts.push(`domain=${lookup.domain.map(encodeURIComponent).join(',')}`);
  if (lookup.minIntentScore !== undefined) parts.push(`minIntentScore=${lookup.minIntentScore}`);
  return parts.join('&');
}

async function readAllPages(query: string, key: string, pageSize: number) {
  const ids: string[] = [];
  const totals = new Set<number>();
  let total = Infinity;
  for (let offset = 0; offset < total; offset += pageSize) {
    const path = `/v1/companies?${query}&limit=${pageSize}&offset=${offset}`;
    const response = await getWithKey(t.app, path, key);
    expect(response.status).toBe(200);
    total = response.body.total as number;
    totals.add(total);
    ids.push(...(response.body.data as { id: string }[]).map((item) => item.id));
  }
  return { ids, totals: [...totals] };
}

describe('domain and q, against an independent filter over the same rows', () => {
  beforeAll(async () => {
    // The contract folds case as Unicode does; a database under the C locale folds ASCII only.
    const [{ folded }] = await t.prisma.$queryRaw<
      { folded: string }[]
    >`SELECT lower('ÉÜ') AS folded`;
    expect(folded).toBe('éü');
  });

  it('keeps every matching company once, in order, as many as total, none of another workspace', async () => {
    // A company of another workspace that every lookup of these runs could match.
    const other = await createWorkspace(t.prisma);
    const foreign = await createCompany(t.prisma, other.id, { name: 'ab%_\\ éÉ', domain: 'ab.a' });
    await fc.assert(
      fc.asyncProperty(
        fc
          .array(companyRow, { maxLength: 20 })
          .chain((rows) => fc.tuple(fc.constant(rows), lookupFor(rows))),
        fc.oneof(fc.integer({ min: 1, max: 4 }), fc.constant(200)),
        async ([rows, lookup], pageSize) => {
          const tag = runTag();
          const workspace = await createWorkspace(t.prisma);
          const { key } = await createApiKey(t.prisma, workspace.id);
          const companies = await Promise.all(
            rows.map((row, i) =>
              createCompany(t.prisma, workspace.id, { id: `${tag}${i}`, ...row }),
            ),
          );
          const expected = companies
            .filter((company) => matches(company, lookup))
            .sort((a, b) => b.intentScore - a.intentScore || byteOrder(a.id, b.id))
            .map((company) => company.id);

          const { ids, totals } = await readAllPages(queryOf(lookup), key, pageSize);

          expect(ids).toStrictEqual(expected);
          expect(totals).toStrictEqual([expected.length]);
          expect(ids).not.toContain(foreign.id);
        },
      ),
      propertyOptions(RUNS),
    );
  }, 300_000);
});

describe('the lookups, by example', () => {
  let key: string;

  beforeAll(async () => {
    const workspace = await createWorkspace(t.prisma);
    ({ key } = await createApiKey(t.prisma, workspace.id));
    await createCompany(t.prisma, workspace.id, {
      id: 'co_acme',
      name: 'Acme Analytics',
      domain: 'www.Acme.com.',
      intentScore: 80,
      intentLevel: 'hot',
    });
    await createCompany(t.prisma, workspace.id, {
      id: 'co_percent',
      name: '100% Organic_Foods',
      domain: 'organic.example',
      intentScore: 60,
    });
    await createCompany(t.prisma, workspace.id, {
      id: 'co_other',
      name: '100 Percent Organics',
      domain: 'corp.io',
      intentScore: 40,
    });
  });

  const lookUp = async (query: string) => {
    const response = await getWithKey(t.app, `/v1/companies?${query}`, key);
    expect(response.status).toBe(200);
    return {
      total: response.body.total as number,
      ids: (response.body.data as { id: string }[]).map((item) => item.id),
    };
  };

  it.each([
    ['domain=acme.com', ['co_acme']],
    ['domain=ACME.COM', ['co_acme']],
    ['domain=www.acme.com.', ['co_acme']],
    ['domain=acme.com,corp.io', ['co_acme', 'co_other']],
    ['domain=acme.com&domain=corp.io', ['co_acme', 'co_other']],
    ['domain=acme.com,%20corp.io', ['co_acme', 'co_other']],
    ['domain=cme.com', []],
    ['domain=acme.com&intentLevel=warm', []],
    ['q=ACME', ['co_acme']],
    ['q=acme.com', ['co_acme']],
    ['q=100%25', ['co_percent']],
    ['q=c_F', ['co_percent']],
    ['q=organic', ['co_percent', 'co_other']],
    ['q=organic&minIntentScore=50', ['co_percent']],
    // A match never spans the name and the domain.
    ['q=csorg', []],
    ['q=Foodsorganic', []],
    ['q=s%20cor', []],
  ])('%s', async (query, ids) => {
    expect(await lookUp(query)).toEqual({ total: ids.length, ids });
  });

  // The value as a test title shows it: long ones cut.
  const titled = (cases: [string, string][]) =>
    cases.map(([query, message]) => [
      query.length > 60 ? `${query.slice(0, 60)}...` : query,
      query,
      message,
    ]);

  it.each(
    titled([
      ['q=ab', 'q has an invalid value "ab": give a text of 3 to 200 characters'],
      [`q=${'x'.repeat(201)}`, 'q has an invalid value "xxxxxxxx'],
      ['q=a%09bc', 'q has an invalid value "a\\tbc"'],
      ['q=abc&q=def', 'q must be given only once'],
      ['q=', 'q has an invalid value ""'],
      ['domain=', 'domain has an invalid value "": give one or more domains such as acme.com'],
      ['domain=acme.com,', 'domain has an invalid value ""'],
      ['domain=https://acme.com', 'domain has an invalid value "https://acme.com"'],
      ['domain=acme.com/x', 'domain has an invalid value "acme.com/x"'],
      ['domain=a%20b.com', 'domain has an invalid value "a b.com"'],
      ['domain=.acme.com', 'domain has an invalid value ".acme.com"'],
      [`domain=${'a'.repeat(254)}`, 'domain has an invalid value "aaaaaaaa'],
      [
        `domain=${Array.from({ length: 101 }, (_, i) => `d${i}.com`).join(',')}`,
        'domain has 101 values: give one or more domains such as acme.com, comma-separated, at most 100',
      ],
    ]),
  )('%s is a 400 naming the parameter and the value', async (_, query, message) => {
    const response = await getWithKey(t.app, `/v1/companies?${query}`, key);
    const messages = expectValidationError(response, `/v1/companies?${query}`);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toContain(message);
  });

  it('takes 100 domains', async () => {
    const domains = Array.from({ length: 99 }, (_, i) => `d${i}.com`);
    expect(await lookUp(`domain=${[...domains, 'acme.com'].join(',')}`)).toEqual({
      total: 1,
      ids: ['co_acme'],
    });
  });

  it('is no filter of the leads list', async () => {
    for (const query of ['q=acme', 'domain=acme.com']) {
      expect((await getWithKey(t.app, `/v1/leads?${query}`, key)).status).toBe(400);
    }
  });
});

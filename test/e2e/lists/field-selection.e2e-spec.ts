import fc from 'fast-check';
import { COMPANY_SELECTABLE } from '../../../src/companies/company.fields';
import { selectableNames } from '../../../src/items/field-selection';
import { LEAD_SELECTABLE } from '../../../src/leads/lead.fields';
import { createTestApp, type TestApp } from '../../support/app';
import { readStream } from '../../support/change-stream';
import { createCompany, createContact, createLead } from '../../support/factories';
import { propertyOptions } from '../../support/fast-check';
import { createTenant, expectValidationError, getWithKey } from '../../support/http';
import { listenOnLoopback } from '../../support/raw-http';
import { restricted } from '../../support/selected-fields';

/*
 * `fields` (docs/api.md, "Choosing the fields"): on every read of an item, an answer with a
 * selection is the answer without one restricted to the selected fields (and the ids), in the same
 * order, for generated selections, after generated updates and deletions. The contract check of
 * the test app validates every answer against the OpenAPI document.
 */
const RUNS = 25;

type Json = Record<string, unknown>;

let t: TestApp;
let port: number;
let key: string;
let workspaceId: string;

beforeAll(async () => {
  t = await createTestApp({ env: { RATE_LIMIT_PER_MINUTE: '1000000' } });
  port = await listenOnLoopback(t.app);
  const tenant = await createTenant(t.prisma);
  key = tenant.key;
  workspaceId = tenant.workspace.id;
  for (let i = 0; i < 6; i++) {
    const company = await createCompany(t.prisma, workspaceId, {
      intentScore: 40 + i * 7,
      siren: i % 2 === 0 ? null : `55210055${i}`,
    });
    for (const [j, seniority] of (['ic', 'c_level', 'vp'] as const).slice(0, i % 4).entries()) {
      await createContact(t.prisma, company, {
        seniority,
        email: j === 0 ? null : `person${j}@example.com`,
      });
    }
    await createLead(t.prisma, company, { intentScore: 50 + i, assignedToId: i % 2 ? 'u1' : null });
  }
});

afterAll(async () => {
  await t.close();
});

/** A change as the selection leaves it: a deletion unchanged, an upsert's item restricted. */
function restrictedChange(change: Json, itemKey: string, names: string[]): Json {
  return change.op === 'delete'
    ? change
    : { ...change, [itemKey]: restricted(change[itemKey] as Json, names) };
}

async function body(path: string): Promise<Json> {
  const response = await getWithKey(t.app, path, key);
  expect(response.status).toBe(200);
  return response.body as Json;
}

async function streamChanges(path: string): Promise<Json[]> {
  const read = await readStream(port, path, key);
  expect(read.status).toBe(200);
  expect(read.lines.at(-1)).toMatchObject({ hasMore: false });
  return read.lines.filter((line) => 'op' in line);
}

/** Equal as values and in the order of their keys: what a client reading the JSON sees. */
function expectSame(selected: unknown, expected: unknown): void {
  expect(selected).toStrictEqual(expected);
  expect(JSON.stringify(selected)).toBe(JSON.stringify(expected));
}

const resources = [
  { path: '/v1/companies', itemKey: 'company', names: selectableNames(COMPANY_SELECTABLE) },
  { path: '/v1/leads', itemKey: 'lead', names: selectableNames(LEAD_SELECTABLE) },
] as const;

/** The workspace's data, changed by one generated step between reads. */
type Step = 'none' | 'rename' | 'dropContact' | 'dropLead' | 'dropCompany' | 'addCompany';
const STEPS: Step[] = ['none', 'rename', 'dropContact', 'dropLead', 'dropCompany', 'addCompany'];

async function apply(step: Step, n: number): Promise<void> {
  const companies = await t.prisma.company.findMany({
    where: { workspaceId },
    orderBy: { id: 'asc' },
  });
  const company = companies[n % Math.max(companies.length, 1)];
  switch (step) {
    case 'none':
      return;
    case 'rename':
      if (company) {
        await t.prisma.company.update({
          where: { id: company.id },
          data: { name: `Renamed ${n}`, intentScore: n % 100 },
        });
      }
      return;
    case 'dropContact': {
      const contact = await t.prisma.contact.findFirst({ where: { workspaceId } });
      if (contact) await t.prisma.contact.delete({ where: { id: contact.id } });
      return;
    }
    case 'dropLead': {
      const lead = await t.prisma.lead.findFirst({ where: { workspaceId } });
      if (lead) await t.prisma.lead.delete({ where: { id: lead.id } });
      return;
    }
    case 'dropCompany':
      // Keeps a few, so that the reads have items to compare.
      if (company && companies.length > 3) {
        await t.prisma.company.delete({ where: { id: company.id } });
      }
      return;
    case 'addCompany': {
      const added = await createCompany(t.prisma, workspaceId, { intentScore: n % 100 });
      await createContact(t.prisma, added, { seniority: 'manager', phone: '+33 1 23' });
      await createLead(t.prisma, added, { intentScore: n % 100 });
      return;
    }
  }
}

describe('a read with fields', () => {
  const selection = (names: readonly string[]) =>
    fc
      .subarray([...names], { minLength: 1 })
      .chain((picked) => fc.shuffledSubarray(picked, { minLength: picked.length }));

  it.each(resources)(
    '$path: equals the read without fields restricted to them, for every read, after generated changes',
    async ({ path, itemKey, names }) => {
      await fc.assert(
        fc.asyncProperty(
          selection(names),
          fc.constantFrom(...STEPS),
          fc.nat(1000),
          fc.boolean(),
          async (picked, step, n, repeated) => {
            await apply(step, n);
            // Comma-separated, or the parameter repeated (`fields=a&fields=b`).
            const fields = repeated
              ? picked.map((name) => `fields=${encodeURIComponent(name)}`).join('&')
              : `fields=${picked.map(encodeURIComponent).join(',')}`;

            const list = await body(`${path}?limit=200`);
            const selectedList = await body(`${path}?limit=200&${fields}`);
            expectSame(selectedList, {
              ...list,
              data: (list.data as Json[]).map((item) => restricted(item, picked)),
            });

            for (const item of (list.data as Json[]).slice(0, 2)) {
              const id = encodeURIComponent(item.id as string);
              expectSame(await body(`${path}/${id}?${fields}`), restricted(item, picked));
            }

            const page = await body(`${path}/changes?limit=1000`);
            const selectedPage = await body(`${path}/changes?limit=1000&${fields}`);
            expect(selectedPage.hasMore).toBe(page.hasMore);
            expectSame(
              selectedPage.data,
              (page.data as Json[]).map((change) => restrictedChange(change, itemKey, picked)),
            );

            const stream = await streamChanges(`${path}/changes/stream`);
            const selectedStream = await streamChanges(`${path}/changes/stream?${fields}`);
            expectSame(
              selectedStream,
              stream.map((change) => restrictedChange(change, itemKey, picked)),
            );
          },
        ),
        propertyOptions(RUNS),
      );
    },
    240_000,
  );

  // The generated steps above may have dropped every contact and lead: one more of each first.
  async function addCompanyWithContactAndLead(): Promise<void> {
    const added = await createCompany(t.prisma, workspaceId, { intentScore: 77 });
    await createContact(t.prisma, added, { seniority: 'vp', email: 'added@example.com' });
    await createLead(t.prisma, added, { intentScore: 77 });
  }

  it('gives contacts whole, or each with only the fields named and its id', async () => {
    await addCompanyWithContactAndLead();
    const { data } = (await body('/v1/companies?fields=contacts.email,name&limit=200')) as {
      data: Json[];
    };
    const withContacts = data.filter((company) => (company.contacts as Json[]).length > 0);
    expect(withContacts.length).toBeGreaterThan(0);
    for (const company of data) {
      expect(Object.keys(company)).toEqual(['id', 'name', 'contacts']);
      for (const contact of company.contacts as Json[]) {
        expect(Object.keys(contact)).toEqual(['id', 'email']);
      }
    }
    // `contacts` whole wins over a `contacts.<field>` beside it.
    const whole = (await body('/v1/companies?fields=contacts.email,contacts&limit=200')) as {
      data: Json[];
    };
    const full = (await body('/v1/companies?limit=200')) as { data: Json[] };
    expect(whole.data).toEqual(full.data.map(({ id, contacts }) => ({ id, contacts })));
  });

  it('answers `id` alone when only `id` is named', async () => {
    await addCompanyWithContactAndLead();
    const { data } = (await body('/v1/leads?fields=id')) as { data: Json[] };
    expect(data.length).toBeGreaterThan(0);
    for (const lead of data) expect(Object.keys(lead)).toEqual(['id']);
  });
});

describe('ETags with fields', () => {
  it('tell one field set from another, and answer a 304 to the same', async () => {
    const first = await getWithKey(t.app, '/v1/companies?fields=name', key);
    const other = await getWithKey(t.app, '/v1/companies?fields=domain', key);
    const whole = await getWithKey(t.app, '/v1/companies', key);
    const tags = [first, other, whole].map((response) => response.headers.etag);
    expect(new Set(tags).size).toBe(3);
    const again = await getWithKey(t.app, '/v1/companies?fields=name', key).set(
      'If-None-Match',
      tags[0],
    );
    expect(again.status).toBe(304);
    const elsewhere = await getWithKey(t.app, '/v1/companies?fields=domain', key).set(
      'If-None-Match',
      tags[0],
    );
    expect(elsewhere.status).toBe(200);
  });
});

describe('a fields that names no field', () => {
  const reads = (base: string) => [
    base,
    `${base}/some-id`,
    `${base}/changes`,
    `${base}/changes/stream`,
  ];

  it.each([...reads('/v1/companies'), ...reads('/v1/leads')])(
    '%s: a 400 with one message per unknown name, naming the allowed ones',
    async (path) => {
      const names = path.startsWith('/v1/companies')
        ? selectableNames(COMPANY_SELECTABLE)
        : selectableNames(LEAD_SELECTABLE);
      const response = await getWithKey(
        t.app,
        `${path}?fields=name,colour,contacts.shoe,name`,
        key,
      );
      const messages = expectValidationError(
        response,
        response.request.url.replace(/^http:\/\/[^/]+/, ''),
      );
      // A lead has no `name` (its contact's is `contactName`): named twice, refused once.
      const expected = path.startsWith('/v1/leads')
        ? ['name', 'colour', 'contacts.shoe']
        : ['colour', 'contacts.shoe'];
      expect(messages).toEqual(
        expected.map(
          (name) =>
            `fields has an unknown name "${name}": give one or more of ${names.join(', ')}, comma-separated`,
        ),
      );
    },
  );

  it.each([
    ['fields=', 'fields has an empty name'],
    ['fields=id,,name', 'fields has an empty name'],
    ['fields=id&fields=', 'fields has an empty name'],
  ])('?%s: a 400', async (query, message) => {
    for (const path of reads('/v1/companies')) {
      const messages = expectValidationError(
        await getWithKey(t.app, `${path}?${query}`, key),
        `${path}?${query}`,
      );
      expect(messages).toHaveLength(1);
      expect(messages[0]).toContain(message);
    }
  });
});

import fc from 'fast-check';
import { createTestApp, type TestApp } from '../../support/app';
import {
  createApiKey,
  createCompany,
  createContact,
  createLead,
  createWorkspace,
} from '../../support/factories';
import { propertyOptions } from '../../support/fast-check';
import {
  BASE_TIME,
  type GeneratedRow,
  idSuffix,
  instant,
  runTag,
  score,
  sinceAround,
} from '../../support/generated-data';
import { getWithKey } from '../../support/http';

/*
 * Generated pairs of workspaces that look alike: rows present in both (same company name and
 * domain, same contact names, same score and date, ids that interleave), and rows of one only.
 * Whatever page of A is asked for (offset, limit, since), it holds only A's items, their contacts
 * and leads are A's, and `total` counts A's alone. The same for B.
 */
const RUNS = 50;
const LISTS = ['/v1/companies', '/v1/leads'] as const;
type List = (typeof LISTS)[number];
type Label = 'A' | 'B';

interface Tenant {
  key: string;
  /** Per list, the items written with the instant `since` compares. */
  items: Record<List, Map<string, Date>>;
  contactIds: Set<string>;
}

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({ env: { RATE_LIMIT_PER_MINUTE: '1000000' } });
});

afterAll(async () => {
  await t.close();
});

interface PairRow extends GeneratedRow {
  owner: Label | 'both';
  contacts: number;
}

const pairRows = fc.uniqueArray(
  fc.record({
    suffix: idSuffix,
    score,
    at: instant,
    owner: fc.constantFrom<PairRow['owner']>('A', 'B', 'both', 'both'),
    contacts: fc.nat(2),
  }),
  { selector: (r) => r.suffix, maxLength: 12 },
);

const query = (data: GeneratedRow[]) =>
  fc.record({
    tenant: fc.constantFrom<Label>('A', 'B'),
    list: fc.constantFrom(...LISTS),
    offset: fc.oneof(fc.nat(6), fc.nat(30)),
    limit: fc.oneof(fc.integer({ min: 1, max: 5 }), fc.constant(200)),
    since: fc.option(sinceAround(data), { nil: undefined }),
  });

async function writePair(data: PairRow[]): Promise<Record<Label, Tenant>> {
  const tag = runTag();
  const tenants = {} as Record<Label, Tenant>;
  for (const label of ['A', 'B'] as const) {
    const workspace = await createWorkspace(t.prisma, { name: 'Look-alike Ltd' });
    tenants[label] = {
      key: (await createApiKey(t.prisma, workspace.id)).key,
      items: { '/v1/companies': new Map(), '/v1/leads': new Map() },
      contactIds: new Set(),
    };
    const mine = data.filter((r) => r.owner === label || r.owner === 'both');
    await Promise.all(
      mine.map(async (r) => {
        const at = new Date(BASE_TIME + r.at);
        // A's and B's ids differ only in their last character: they interleave in every order.
        const company = await createCompany(t.prisma, workspace.id, {
          id: `${tag}${r.suffix}${label}`,
          name: `Shared ${r.suffix}`,
          domain: `${r.suffix}.example`,
          intentScore: r.score,
          lastSeen: at,
        });
        tenants[label].items['/v1/companies'].set(company.id, at);
        for (let i = 0; i < r.contacts; i++) {
          const contact = await createContact(t.prisma, company, { name: `Alice ${i}` });
          tenants[label].contactIds.add(contact.id);
        }
        const lead = await createLead(t.prisma, company, {
          id: `${tag}${r.suffix}${label}`,
          contactName: 'Alice 0',
          intentScore: r.score,
          createdAt: at,
        });
        tenants[label].items['/v1/leads'].set(lead.id, at);
      }),
    );
  }
  return tenants;
}

interface Item {
  id: string;
  companyId?: string;
  contacts?: { id: string }[];
}

it('no page of a workspace holds anything of another, and its total counts its own alone', async () => {
  await fc.assert(
    fc.asyncProperty(
      pairRows.chain((data) =>
        fc.tuple(fc.constant(data), fc.array(query(data), { minLength: 1, maxLength: 6 })),
      ),
      async ([data, queries]) => {
        const tenants = await writePair(data);
        for (const { tenant, list, offset, limit, since } of queries) {
          const own = tenants[tenant];
          const sinceParameter = since ? `&since=${since.toISOString()}` : '';
          const path = `${list}?offset=${offset}&limit=${limit}${sinceParameter}`;

          const response = await getWithKey(t.app, path, own.key);

          expect(response.status).toBe(200);
          const ownItems = own.items[list];
          const matching = [...ownItems.values()].filter((at) => !since || at >= since).length;
          const page = response.body.data as Item[];
          expect(response.body.total).toBe(matching);
          expect(page).toHaveLength(Math.max(0, Math.min(limit, matching - offset)));
          expect(page.filter((item) => !ownItems.has(item.id))).toStrictEqual([]);
          const contactIds = page.flatMap((item) => (item.contacts ?? []).map((c) => c.id));
          expect(contactIds.filter((id) => !own.contactIds.has(id))).toStrictEqual([]);
          const companies = own.items['/v1/companies'];
          expect(page.filter((item) => item.companyId && !companies.has(item.companyId))).toEqual(
            [],
          );
        }
      },
    ),
    propertyOptions(RUNS),
  );
}, 300_000);

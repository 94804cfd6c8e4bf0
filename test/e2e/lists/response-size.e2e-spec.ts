import { Client } from 'pg';
import { FEED_PAGE_MAX_BYTES } from '../../../src/changes/change-feed-sql';
import { COMPANY_PAGE_SQL } from '../../../src/companies/companies.sql';
import { MAX_CONTACTS_PER_COMPANY } from '../../../src/companies/company.fields';
import { MAX_CHANGES_LIMIT } from '../../../src/changes/changes-query.dto';
import { MAX_LIMIT } from '../../../src/http/list-query.dto';
import { BodyBudget, INLINE_BODY_BYTES } from '../../../src/items/body-budget';
import { largestResponses } from '../../support/largest-responses';
import { createTestApp, type TestApp } from '../../support/app';
import { createTenant, getWithKey } from '../../support/http';
import { loadLargestCompanies } from '../../support/largest-items';

/*
 * Responses of the largest items the bounds allow (docs/api.md, "Sizes"): a list page is the same
 * body whether it is small enough to come back at once or read again once its heap is reserved
 * (items/body-budget.ts), within the bound computed from the field maps; a feed page stops at
 * FEED_PAGE_MAX_BYTES and following its cursor still gives every change once.
 */

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});

afterAll(async () => {
  await t?.close();
});

/** The raw bytes of a response (supertest would parse them). */
function raw(path: string, key: string) {
  return getWithKey(t.app, path, key)
    .buffer(true)
    .parse((response, done) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => done(null, Buffer.concat(chunks)));
    });
}

it('a page of 200 of the largest companies: the body PostgreSQL writes, within the bound', async () => {
  const { workspace, key } = await createTenant(t.prisma);
  await loadLargestCompanies(t.database.url, workspace.id, MAX_LIMIT);
  const budget = t.app.get(BodyBudget);

  const response = await raw(`/v1/companies?limit=${MAX_LIMIT}`, key);

  expect(response.status).toBe(200);
  const body = response.body as Buffer;
  const { companyPage } = largestResponses();
  expect(body.length).toBeGreaterThan(INLINE_BODY_BYTES);
  expect(body.length).toBeLessThanOrEqual(companyPage);
  expect(body.length).toBeGreaterThan(0.98 * companyPage);
  // The same bytes as the statement itself writes, unsized.
  const client = new Client({ connectionString: t.database.url });
  await client.connect();
  try {
    await client.query("SET TimeZone = 'UTC'; SET extra_float_digits = 1");
    const { rows } = await client.query<{ body: string }>(COMPANY_PAGE_SQL, [
      workspace.id,
      null,
      MAX_LIMIT,
      0,
    ]);
    expect(body.toString('utf8') === rows[0].body).toBe(true);
  } finally {
    await client.end();
  }
  const page = JSON.parse(body.toString('utf8')) as { data: { contacts: unknown[] }[] };
  expect(page.data).toHaveLength(MAX_LIMIT);
  expect(page.data.every((company) => company.contacts.length === MAX_CONTACTS_PER_COMPANY)).toBe(
    true,
  );
  // The room reserved for it is given back.
  await new Promise((resolve) => setImmediate(resolve));
  expect(budget.heldBytes).toBe(0);
});

it(`a feed page stops at ${FEED_PAGE_MAX_BYTES} bytes of data, and its cursor goes on from there`, async () => {
  const { workspace, key } = await createTenant(t.prisma);
  const companies = 80;
  await loadLargestCompanies(t.database.url, workspace.id, companies);
  const { company } = largestResponses();

  const seen: string[] = [];
  const sizes: number[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 10; page++) {
    const path = `/v1/companies/changes?limit=${MAX_CHANGES_LIMIT}${
      cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''
    }`;
    const response = await raw(path, key);
    expect(response.status).toBe(200);
    const text = (response.body as Buffer).toString('utf8');
    const body = JSON.parse(text) as {
      data: { op: string; id: string }[];
      nextCursor: string;
      hasMore: boolean;
    };
    seen.push(...body.data.map((change) => change.id));
    sizes.push(Buffer.byteLength(text));
    cursor = body.nextCursor;
    if (!body.hasMore) break;
  }

  // Every company once, in order, over pages of at most the bound and one change more.
  expect(seen).toHaveLength(companies);
  expect(new Set(seen).size).toBe(companies);
  expect(sizes.length).toBeGreaterThan(1);
  for (const size of sizes) expect(size).toBeLessThanOrEqual(FEED_PAGE_MAX_BYTES + 2 * company);
  expect(sizes[0]).toBeGreaterThan(FEED_PAGE_MAX_BYTES - company);
});

import {
  BadRequestError,
  Client,
  NotFoundError,
  RateLimitError,
  UnauthorizedError,
  type ChangePage,
  type ClientOptions,
} from '../../../clients/typescript/src';
import { createTestApp, listening, type TestApp } from '../../support/app';
import { createCompany, createContact, createLead } from '../../support/factories';
import { createTenant, getWithKey, ISO_UTC_MILLIS } from '../../support/http';

/** The application on a loopback port: the client speaks real HTTP through the real fetch. */
/** A client whose requests' statuses are recorded and whose sleeps move the server's clock. */
function recordingClient(t: TestApp, options: ClientOptions) {
  const statuses: number[] = [];
  const sleeps: number[] = [];
  const client = new Client({
    fetch: async (input, init) => {
      const response = await fetch(input, init);
      statuses.push(response.status);
      return response;
    },
    // The server's clock moves by the whole wait (rate-limit windows pass at once); real time by
    // a little, so that a transaction holding a feed's changes back can end meanwhile.
    sleep: (ms) => {
      sleeps.push(ms);
      t.clock.advance(ms);
      return new Promise((resolve) => setTimeout(resolve, Math.min(ms, 50)));
    },
    now: () => t.clock.now(),
    ...options,
  });
  return { client, statuses, sleeps };
}

describe('the TypeScript client against the server', () => {
  let t: TestApp;
  let baseUrl: string;
  let key: string;

  beforeAll(async () => {
    t = await createTestApp();
    baseUrl = await listening(t);
    const tenant = await createTenant(t.prisma);
    key = tenant.key;
    for (const [i, score] of [90, 70, 50].entries()) {
      const company = await createCompany(t.prisma, tenant.workspace.id, {
        intentScore: score,
        lastSeen: new Date(Date.UTC(2026, 1, 10 + i)),
      });
      await createContact(t.prisma, company, { email: 'ana@acme.example' });
      await createLead(t.prisma, company, {
        intentScore: score,
        createdAt: new Date(Date.UTC(2026, 1, 10 + i)),
      });
    }
  });

  afterAll(async () => {
    await t.close();
  });

  it('me() returns the workspace as the API does', async () => {
    const { client } = recordingClient(t, { apiKey: key, baseUrl });
    const expected = (await getWithKey(t.app, '/v1/me', key)).body;
    await expect(client.me()).resolves.toStrictEqual(expected);
    // The limits as the server stated them, read from its IETF fields.
    expect(client.rateLimits.policies.map(({ name }) => name)).toEqual(['in-flight', 'per-minute']);
    expect(client.rateLimits.states[1]).toMatchObject({ name: 'per-minute', resetSeconds: 60 });
  });

  it('listCompanies() sends limit, offset and since (a Date) and returns the page as is', async () => {
    const { client } = recordingClient(t, { apiKey: key, baseUrl });
    const page = await client.listCompanies({
      limit: 1,
      offset: 1,
      since: new Date('2026-02-11T00:00:00.000Z'),
    });
    const expected = await getWithKey(
      t.app,
      '/v1/companies?limit=1&offset=1&since=2026-02-11T00:00:00.000Z',
      key,
    );
    expect(page).toStrictEqual(expected.body);
    expect(page).toMatchObject({ total: 2, limit: 1, offset: 1 });
    expect(page.data[0]?.contacts[0]?.email).toBe('ana@acme.example');
  });

  it('asks for compression and reads the compressed page as the API sends it', async () => {
    const encodings: (string | null)[] = [];
    const sent: (string | null)[] = [];
    const client = new Client({
      apiKey: key,
      baseUrl,
      fetch: async (input, init) => {
        sent.push(new Headers(init?.headers).get('accept-encoding'));
        const response = await fetch(input, init);
        encodings.push(response.headers.get('content-encoding'));
        return response;
      },
    });

    const page = await client.listCompanies({ limit: 200 });

    expect(sent).toEqual(['br, gzip']);
    // Three companies with their contacts: over the 1 KiB threshold, so compressed.
    expect(encodings).toEqual(['br']);
    expect(page).toStrictEqual((await getWithKey(t.app, '/v1/companies?limit=200', key)).body);
  });

  it('listLeads() takes since as a string and returns the page as is', async () => {
    const { client } = recordingClient(t, { apiKey: key, baseUrl });
    const page = await client.listLeads({ since: '2026-02-12' });
    const expected = await getWithKey(t.app, '/v1/leads?since=2026-02-12', key);
    expect(page).toStrictEqual(expected.body);
    expect(page.total).toBe(1);
  });

  it('companies() and leads() yield every item, in the API order', async () => {
    const { client } = recordingClient(t, { apiKey: key, baseUrl });
    const companies = [];
    for await (const company of client.companies()) companies.push(company);
    const leads = [];
    for await (const lead of client.leads({ since: new Date('2026-02-11T00:00:00.000Z') })) {
      leads.push(lead);
    }
    expect(companies).toStrictEqual((await getWithKey(t.app, '/v1/companies', key)).body.data);
    expect(companies.map((company) => company.intentScore)).toEqual([90, 70, 50]);
    expect(leads.map((lead) => lead.intentScore)).toEqual([70, 50]);
  });

  it('with revalidate, asks again with If-None-Match and returns the kept page on a 304', async () => {
    const { client, statuses } = recordingClient(t, { apiKey: key, baseUrl, revalidate: 2 });
    const first = await client.listCompanies({ limit: 2 });
    const again = await client.listCompanies({ limit: 2 });
    expect(again).toStrictEqual(first);
    expect(statuses).toEqual([200, 304]);
    // Three URLs kept at most two: the first one asked for is the one forgotten.
    await client.listLeads();
    await client.me();
    await client.listCompanies({ limit: 2 });
    expect(statuses).toEqual([200, 304, 200, 200, 200]);
  });

  it('the lists and iterators send the filters, several values comma-separated', async () => {
    const { client } = recordingClient(t, { apiKey: key, baseUrl });
    const page = await client.listCompanies({ minIntentScore: 60, intentLevel: ['warm', 'hot'] });
    const expected = await getWithKey(
      t.app,
      '/v1/companies?minIntentScore=60&intentLevel=warm,hot',
      key,
    );
    expect(page).toStrictEqual(expected.body);
    expect(page.data.map((company) => company.intentScore)).toEqual([90, 70]);
    const leads = [];
    for await (const lead of client.leads({ minIntentScore: 70, status: ['new'] })) {
      leads.push(lead);
    }
    expect(leads.map((lead) => lead.intentScore)).toEqual([90, 70]);
  });

  it('listCompanies() sends the lookups: domains comma-separated, and q', async () => {
    const { client } = recordingClient(t, { apiKey: key, baseUrl });
    const [first] = (await getWithKey(t.app, '/v1/companies', key)).body.data;
    const domain = (first.domain as string).toUpperCase();
    const page = await client.listCompanies({ domain: [domain, 'none.example'], q: 'ompan' });
    const expected = await getWithKey(
      t.app,
      `/v1/companies?domain=${domain},none.example&q=ompan`,
      key,
    );
    expect(page).toStrictEqual(expected.body);
    expect(page.data.map((company) => company.id)).toEqual([first.id]);
  });

  it('getCompany() and getLead() return the item as the API does', async () => {
    const { client, statuses } = recordingClient(t, { apiKey: key, baseUrl });
    const [company] = (await getWithKey(t.app, '/v1/companies', key)).body.data;
    const [lead] = (await getWithKey(t.app, '/v1/leads', key)).body.data;

    expect(await client.getCompany(company.id)).toStrictEqual(company);
    expect(await client.getLead(lead.id)).toStrictEqual(lead);
    expect(statuses).toEqual([200, 200]);
  });

  it('getCompany() sends an id with reserved characters as one path segment', async () => {
    const tenant = await createTenant(t.prisma);
    const created = await createCompany(t.prisma, tenant.workspace.id, { id: 'co_a/b?c d#e%41' });
    const { client } = recordingClient(t, { apiKey: tenant.key, baseUrl });

    await expect(client.getCompany(created.id)).resolves.toMatchObject({ id: 'co_a/b?c d#e%41' });
  });

  it('an id of another workspace, or of none, is a NotFoundError (404), not retried', async () => {
    const other = await createTenant(t.prisma);
    const theirs = await createCompany(t.prisma, other.workspace.id);
    const theirLead = await createLead(t.prisma, theirs);
    const { client, statuses } = recordingClient(t, { apiKey: key, baseUrl });
    // The other workspace's key reads them: they exist.
    const theirClient = recordingClient(t, { apiKey: other.key, baseUrl }).client;
    await expect(theirClient.getCompany(theirs.id)).resolves.toMatchObject({ id: theirs.id });
    await expect(theirClient.getLead(theirLead.id)).resolves.toMatchObject({ id: theirLead.id });

    const calls: [() => Promise<unknown>, string][] = [
      [() => client.getCompany(theirs.id), `/v1/companies/${theirs.id}`],
      [() => client.getLead(theirLead.id), `/v1/leads/${theirLead.id}`],
      [() => client.getCompany('co_nobody'), '/v1/companies/co_nobody'],
    ];
    for (const [call, path] of calls) {
      const error = await call().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(NotFoundError);
      expect(error).toMatchObject({
        status: 404,
        attempts: 1,
        envelope: { statusCode: 404, message: 'Not Found', error: 'NOT_FOUND', path },
      });
    }
    expect(statuses).toEqual([404, 404, 404]);
  });

  it('companyChanges() and leadChanges() bring every item, then only what changed after the cursor', async () => {
    const tenant = await createTenant(t.prisma);
    const companies = [];
    for (let i = 0; i < 5; i++) companies.push(await createCompany(t.prisma, tenant.workspace.id));
    const lead = await createLead(t.prisma, companies[0]);
    const { client } = recordingClient(t, { apiKey: tenant.key, baseUrl });
    const drain = async <C>(pages: AsyncIterable<ChangePage<C>>) => {
      const seen: ChangePage<C>[] = [];
      for await (const page of pages) seen.push(page);
      return seen;
    };

    const first = await drain(client.companyChanges({ limit: 2, maxWaits: 100 }));
    expect(first.map((page) => page.data.length)).toEqual([2, 2, 1]);
    expect(first.map((page) => page.hasMore)).toEqual([true, true, false]);
    const list = (await getWithKey(t.app, '/v1/companies', tenant.key)).body.data;
    const upserted = first.flatMap((page) => page.data);
    expect(upserted.map((change) => change.op)).toEqual(Array(5).fill('upsert'));
    expect(Object.fromEntries(upserted.map((c) => [c.id, c.op === 'upsert' && c.company]))).toEqual(
      Object.fromEntries(list.map((company: { id: string }) => [company.id, company])),
    );
    const cursor = first.at(-1)?.nextCursor;

    await t.prisma.company.delete({ where: { id: companies[0].id } }); // its lead goes with it
    await t.prisma.company.update({ where: { id: companies[1].id }, data: { intentScore: 99 } });
    const next = await drain(client.companyChanges({ cursor, maxWaits: 100 }));
    expect(next).toHaveLength(1);
    expect(next[0].data).toEqual([
      { op: 'delete', id: companies[0].id, changedAt: expect.any(String) },
      expect.objectContaining({
        op: 'upsert',
        company: expect.objectContaining({ intentScore: 99 }),
      }),
    ]);
    expect(next[0].hasMore).toBe(false);

    const leads = await drain(client.leadChanges({ maxWaits: 100 }));
    expect(leads.flatMap((page) => page.data)).toEqual([
      { op: 'delete', id: lead.id, changedAt: expect.any(String) },
    ]);

    const error = await drain(client.leadChanges({ cursor: next[0].nextCursor })).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(BadRequestError);
    expect(error).toMatchObject({ status: 400, envelope: { message: ['cursor is not valid'] } });
  });

  it('a 400 is a BadRequestError with the envelope, and is not retried', async () => {
    const { client, statuses } = recordingClient(t, { apiKey: key, baseUrl });

    const error = await client.listLeads({ limit: 500 }).catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(BadRequestError);
    const badRequest = error as BadRequestError;
    expect(badRequest.status).toBe(400);
    expect(badRequest.envelope).toStrictEqual({
      statusCode: 400,
      message: ['limit must not be greater than 200'],
      error: 'BAD_REQUEST',
      path: '/v1/leads?limit=500',
      timestamp: expect.stringMatching(ISO_UTC_MILLIS),
    });
    expect(badRequest.requestId).toEqual(expect.any(String));
    expect(badRequest.attempts).toBe(1);
    expect(statuses).toEqual([400]);
  });

  it('a 401 is an UnauthorizedError with the envelope, and is not retried', async () => {
    const { client, statuses } = recordingClient(t, { apiKey: 'st_not_a_key', baseUrl });

    const error = await client.me().catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(UnauthorizedError);
    expect(error).toMatchObject({
      status: 401,
      attempts: 1,
      envelope: { statusCode: 401, message: 'Unauthorized', error: 'UNAUTHORIZED', path: '/v1/me' },
    });
    expect(statuses).toEqual([401]);
  });
});

describe('the TypeScript client and a 429', () => {
  let t: TestApp;
  let baseUrl: string;

  beforeAll(async () => {
    t = await createTestApp({ env: { RATE_LIMIT_PER_MINUTE: '2' } });
    baseUrl = await listening(t);
  });

  afterAll(async () => {
    await t.close();
  });

  it('waits Retry-After (on the server clock) and retries, or gives up after the bound', async () => {
    const { key } = await createTenant(t.prisma);
    // Another process of the integrator spends the window: this client learns it from a 429.
    await getWithKey(t.app, '/v1/me', key).expect(200);
    await getWithKey(t.app, '/v1/me', key).expect(200);

    const patient = recordingClient(t, { apiKey: key, baseUrl });
    await expect(patient.client.me()).resolves.toMatchObject({ plan: 'growth' });
    expect(patient.statuses).toEqual([429, 200]);
    expect(patient.sleeps).toEqual([60_000]);

    await getWithKey(t.app, '/v1/me', key).expect(200);
    const impatient = recordingClient(t, { apiKey: key, baseUrl, maxRateLimitRetries: 0 });
    const error = await impatient.client.me().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error).toMatchObject({ status: 429, envelope: { error: 'TOO_MANY_REQUESTS' } });
    expect(impatient.statuses).toEqual([429]);
  });
});

import {
  BadRequestError,
  Client,
  RateLimitError,
  UnauthorizedError,
  type ClientOptions,
} from '../clients/typescript/src';
import { createTestApp, listening, type TestApp } from './support/app';
import { createCompany, createContact, createLead } from './support/factories';
import { createTenant, getWithKey, ISO_UTC_MILLIS } from './support/http';

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
    sleep: (ms) => {
      sleeps.push(ms);
      t.clock.advance(ms);
      return Promise.resolve();
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

import request from 'supertest';
import { generateApiKey } from '../../../src/auth/api-key';
import { createTestApp, type TestApp } from '../../support/app';
import { createApiKey, createWorkspace } from '../../support/factories';
import {
  createTenant,
  expectErrorEnvelope,
  expectValidationError,
  getWithKey,
} from '../../support/http';

// The query parameters of both lists (docs/api.md, "Query parameters of the lists"): every
// refusal is a 400 envelope whose `message` has one entry per parameter at fault, each naming it,
// and whose `path` is the request path with its query string exactly as sent.
const LISTS = ['/v1/companies', '/v1/leads'] as const;

/** The parameters a message entry names, as whole words. */
const PARAMETERS = ['limit', 'offset', 'since', 'foo', 'bar'];
const parametersNamedBy = (entry: string) =>
  PARAMETERS.filter((name) => new RegExp(`\\b${name}\\b`).test(entry));

// [query string as sent, the one parameter at fault]
const ONE_BAD_PARAMETER: [string, string][] = [
  ['limit=1.5', 'limit'],
  ['limit=1e2', 'limit'],
  ['limit=abc', 'limit'],
  ['limit=', 'limit'],
  ['limit=-1', 'limit'],
  ['limit=0', 'limit'],
  ['limit=201', 'limit'],
  ['limit=%207', 'limit'], // ' 7'
  ['limit=7%20', 'limit'], // '7 '
  ['limit=0x10', 'limit'],
  ['limit=1&limit=2', 'limit'],
  ['offset=-1', 'offset'],
  ['offset=1.5', 'offset'],
  ['offset=', 'offset'],
  ['offset=0&offset=1', 'offset'],
  ['since=yesterday', 'since'],
  ['since=2024-13-45', 'since'],
  ['since=2024-02-30', 'since'],
  ['since=2023-02-29', 'since'],
  ['since=', 'since'],
  ['since=2024-01-01T25:00:00Z', 'since'],
  ['since=2024-01-01T12:60:00Z', 'since'],
  ['since=2024-01-01&since=2024-01-02', 'since'],
  ['limit=10&offset=-1', 'offset'],
  ['since=2024-01-01&limit=500', 'limit'],
];

// [query string as sent, the values the envelope must echo]
const ACCEPTED: [string, { limit: number; offset: number }][] = [
  ['', { limit: 50, offset: 0 }],
  ['limit=1', { limit: 1, offset: 0 }],
  ['limit=7&offset=3', { limit: 7, offset: 3 }],
  ['limit=200&offset=0', { limit: 200, offset: 0 }],
  ['since=2024-02-29', { limit: 50, offset: 0 }],
  ['since=2024-01-01T23:59:59Z', { limit: 50, offset: 0 }],
  ['since=2024-01-01T23:59:59.123Z&limit=2', { limit: 2, offset: 0 }],
  ['since=2024-01-01T08:00:00%2B05:30', { limit: 50, offset: 0 }],
  ['since=2024-01-01T08:00:00', { limit: 50, offset: 0 }],
];

describe('query-parameter validation of the lists', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });

  afterAll(async () => {
    await t.close();
  });

  describe.each(LISTS)('GET %s', (list) => {
    // A fresh key per test: each has its own rate-limit budget.
    let key: string;
    beforeEach(async () => {
      ({ key } = await createTenant(t.prisma));
    });

    const send = (query: string) => getWithKey(t.app, `${list}?${query}`, key);

    it.each(ONE_BAD_PARAMETER)('refuses ?%s with one entry naming %s', async (query, parameter) => {
      const response = await send(query);

      const message = expectValidationError(response, `${list}?${query}`);
      expect(message.map(parametersNamedBy)).toStrictEqual([[parameter]]);
    });

    it.each(ACCEPTED)('accepts ?%s', async (query, applied) => {
      const response = await send(query);

      expect(response.status).toBe(200);
      expect(response.body).toStrictEqual({ total: 0, ...applied, data: [] });
    });

    it('says how limit is out of bounds, as the contract words it', async () => {
      const response = await send('limit=201');

      expect(response.body.message).toStrictEqual(['limit must not be greater than 200']);
    });

    it.each([
      ['offset=-1', 'offset must not be less than 0'],
      ['offset=-99999999999999999999', 'offset must not be less than 0'],
      ['limit=-1', 'limit must not be less than 1'],
      ['limit=0', 'limit must not be less than 1'],
      // Not below the bound, yet not a plain non-negative integer either.
      ['offset=-0', 'offset must be an integer'],
    ])('says what is wrong with ?%s: %j', async (query, message) => {
      const response = await send(query);

      expect(expectValidationError(response, `${list}?${query}`)).toStrictEqual([message]);
    });

    it('refuses an unknown parameter with "property foo should not exist"', async () => {
      const response = await send('foo=1');

      expect(expectValidationError(response, `${list}?foo=1`)).toStrictEqual([
        'property foo should not exist',
      ]);
    });

    it('refuses two unknown parameters with one entry each', async () => {
      const response = await send('foo=1&bar=2');

      expect(expectValidationError(response, `${list}?foo=1&bar=2`).sort()).toStrictEqual([
        'property bar should not exist',
        'property foo should not exist',
      ]);
    });

    it('refuses an unknown parameter next to valid ones, naming only the unknown one', async () => {
      const response = await send('limit=5&foo=1&offset=0');

      expect(expectValidationError(response, `${list}?limit=5&foo=1&offset=0`)).toStrictEqual([
        'property foo should not exist',
      ]);
    });

    it.each([
      ['limit=0&offset=-1&since=yesterday', ['limit', 'offset', 'since']],
      ['limit=abc&offset=1.5&since=&foo=1&bar=2', ['bar', 'foo', 'limit', 'offset', 'since']],
      ['since=2024-02-30&limit=1&limit=2', ['limit', 'since']],
    ])('refuses ?%s with one entry per parameter at fault', async (query, parameters) => {
      const response = await send(query);

      const message = expectValidationError(response, `${list}?${query}`);
      const named = message.map(parametersNamedBy);
      expect(named.every((names) => names.length === 1)).toBe(true);
      expect(named.flat().sort()).toStrictEqual(parameters);
    });

    it.each(['limit[]=1', 'a[b]=1', 'limit[]=1&limit[]=2', 'offset[x]=1'])(
      'refuses the bracket syntax ?%s',
      async (query) => {
        const response = await send(query);

        expectValidationError(response, `${list}?${query}`);
      },
    );

    it.each([
      ['no Authorization header', undefined],
      ['a malformed key', 'Bearer st_not-a-key'],
      ['a well-formed unknown key', `Bearer ${generateApiKey()}`],
    ])('checks the key first: %s with bad parameters is a 401', async (_case, authorization) => {
      const query = 'limit=0&offset=-1&since=yesterday&foo=1';
      const call = request(t.app.getHttpServer()).get(`${list}?${query}`);
      const response = await (authorization ? call.set('Authorization', authorization) : call);

      expectErrorEnvelope(response, {
        status: 401,
        error: 'UNAUTHORIZED',
        path: `${list}?${query}`,
        message: 'Unauthorized',
      });
    });

    it('checks the key first: a revoked key with bad parameters is a 401', async () => {
      const workspace = await createWorkspace(t.prisma);
      const revoked = await createApiKey(t.prisma, workspace.id, { revokedAt: new Date() });

      const response = await getWithKey(t.app, `${list}?limit=201`, revoked.key);

      expectErrorEnvelope(response, {
        status: 401,
        error: 'UNAUTHORIZED',
        path: `${list}?limit=201`,
        message: 'Unauthorized',
      });
    });
  });
});

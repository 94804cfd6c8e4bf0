import request, { type Response, type Test } from 'supertest';
import { createTestApp, type TestApp } from '../../support/app';
import { createTenant, expectErrorEnvelope } from '../../support/http';

// The headers of every response, whatever its status (docs/api.md, "Requests and response
// headers"), and the 404 of unknown paths and methods ("Errors").
describe('response headers', () => {
  let t: TestApp;
  // A fresh key per test (its own rate-limit budget), and one whose budget is spent.
  let key: string;
  let exhaustedKey: string;

  beforeAll(async () => {
    t = await createTestApp();
    ({ key: exhaustedKey } = await createTenant(t.prisma));
    // The default budget is 120 per minute; the manual clock never moves in this file.
    for (let i = 0; i < 120; i++) {
      await request(t.app.getHttpServer())
        .get('/v1/me')
        .set('Authorization', `Bearer ${exhaustedKey}`);
    }
  });

  afterAll(async () => {
    await t.close();
  });

  beforeEach(async () => {
    ({ key } = await createTenant(t.prisma));
  });

  const http = () => request(t.app.getHttpServer());

  function expectContractHeaders(response: Response): void {
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.headers).not.toHaveProperty('x-powered-by');
    expect(response.headers['x-request-id']).toMatch(/^\S+$/);
  }

  const authorized = (test: Test, value = key) => test.set('Authorization', `Bearer ${value}`);

  // [what is sent, the status it gets, how to send it]
  const SCENARIOS: [string, number, () => Test][] = [
    ['GET /v1/me', 200, () => authorized(http().get('/v1/me'))],
    ['GET /v1/companies', 200, () => authorized(http().get('/v1/companies'))],
    ['GET /v1/leads', 200, () => authorized(http().get('/v1/leads'))],
    ['GET /v1/companies?limit=0', 400, () => authorized(http().get('/v1/companies?limit=0'))],
    ['GET /v1/leads?foo=1', 400, () => authorized(http().get('/v1/leads?foo=1'))],
    ['GET /v1/me without a key', 401, () => http().get('/v1/me')],
    ['GET /v1/companies with a bad key', 401, () => authorized(http().get('/v1/companies'), 'x')],
    ['GET /v1/nope', 404, () => authorized(http().get('/v1/nope'))],
    ['GET /v1/companies/x', 404, () => authorized(http().get('/v1/companies/x'))],
    ['POST /v1/companies', 404, () => authorized(http().post('/v1/companies'))],
    ['PUT /v1/me', 404, () => authorized(http().put('/v1/me'))],
    ['PATCH /v1/leads', 404, () => authorized(http().patch('/v1/leads'))],
    ['DELETE /v1/leads', 404, () => authorized(http().delete('/v1/leads'))],
    ['GET /v1/me past the rate limit', 429, () => authorized(http().get('/v1/me'), exhaustedKey)],
  ];

  describe.each(SCENARIOS)('%s (%i)', (_label, status, send) => {
    it('carries the JSON content type, no-store, a request id and no X-Powered-By', async () => {
      const response = await send();

      expect(response.status).toBe(status);
      expectContractHeaders(response);
    });

    it.each(['3f2c1a9e-7b4d-4e8f-9a01-23456789abcd', 'req_01HXYZ-abc.def:1'])(
      'echoes the sane caller request id %s',
      async (requestId) => {
        const response = await send().set('X-Request-Id', requestId);

        expect(response.status).toBe(status);
        expect(response.headers['x-request-id']).toBe(requestId);
      },
    );

    it.each([
      ['with a space', 'abc def'],
      ['with markup', '<script>alert(1)</script>'],
      ['with quotes and a semicolon', `"a";b='c'`],
      ['with a non-ASCII character', 'caf\u00e9'],
      ['of absurd length', 'a'.repeat(4096)],
      ['empty', ''],
    ])('replaces a caller request id %s by a generated one', async (_case, requestId) => {
      const response = await send().set('X-Request-Id', requestId);

      expect(response.status).toBe(status);
      const generated = response.headers['x-request-id'];
      expect(generated).toMatch(/^\S+$/);
      expect(generated).not.toBe(requestId);
      expect(generated.length).toBeLessThanOrEqual(128);
    });

    it('generates a different request id for each request without one', async () => {
      const first = await send();
      const second = await send();

      expect(first.headers['x-request-id']).toMatch(/^\S+$/);
      expect(second.headers['x-request-id']).toMatch(/^\S+$/);
      expect(first.headers['x-request-id']).not.toBe(second.headers['x-request-id']);
    });
  });

  describe('unknown paths and methods', () => {
    it.each([
      ['get', '/v1/nope'],
      ['get', '/v1/nope?limit=1'],
      ['get', '/v2/companies'],
      ['get', '/'],
      ['post', '/v1/companies'],
      ['put', '/v1/me'],
      ['patch', '/v1/leads'],
      ['delete', '/v1/companies?offset=1'],
    ] as const)('%s %s is a 404 envelope with error NOT_FOUND', async (method, path) => {
      const response = await authorized(http()[method](path));

      expectErrorEnvelope(response, {
        status: 404,
        error: 'NOT_FOUND',
        path,
        message: expect.any(String),
      });
    });

    // Not a path that names no resource but a path that cannot be decoded (RFC 3986): a malformed
    // request, answered 400 without echoing it.
    it('GET /v1/%ZZ is a 400 envelope with error BAD_REQUEST', async () => {
      const response = await authorized(http().get('/v1/%ZZ'));

      expectErrorEnvelope(response, {
        status: 400,
        error: 'BAD_REQUEST',
        path: '/v1/%ZZ',
        message: 'Bad Request',
      });
    });
  });

  // Requests a framework may turn away before routing: a body (no endpoint takes one), a path that
  // is not valid percent-encoding. Whatever the status, the headers are owed all the same.
  const BODIES: [string, string, string][] = [
    ['malformed JSON', 'application/json', '{bad'],
    ['JSON over 100 kB', 'application/json', JSON.stringify({ a: 'x'.repeat(200_000) })],
    ['an unsupported charset', 'application/json; charset=klingon', '{}'],
  ];
  const withBody = (test: Test, [, type, body]: [string, string, string]) =>
    test.set('Content-Type', type).send(body);

  describe.each<[string, () => Test]>([
    ...BODIES.map((b): [string, () => Test] => [
      `GET /v1/companies with ${b[0]}`,
      () => withBody(authorized(http().get('/v1/companies')), b),
    ]),
    ...BODIES.map((b): [string, () => Test] => [
      `GET /v1/leads with ${b[0]} and no key`,
      () => withBody(http().get('/v1/leads'), b),
    ]),
    ['GET /v1/%ZZ', () => authorized(http().get('/v1/%ZZ'))],
  ])('%s', (_label, send) => {
    it('carries every contract header', async () => {
      const response = await send().set('X-Request-Id', 'refused-early-1');

      expectContractHeaders(response);
      expect(response.headers['x-request-id']).toBe('refused-early-1');
    });
  });

  describe('a GET that carries a body, which no endpoint takes', () => {
    // A body is none of the contract's reasons for a 400: it is ignored.
    it.each(BODIES)('with %s gets the page', async (...body) => {
      const response = await withBody(authorized(http().get('/v1/companies')), body);

      expect(response.status).toBe(200);
      expect(response.body).toStrictEqual({ total: 0, limit: 50, offset: 0, data: [] });
    });

    it.each(BODIES)('with %s and no key is a 401', async (...body) => {
      const response = await withBody(http().get('/v1/leads'), body);

      expectErrorEnvelope(response, {
        status: 401,
        error: 'UNAUTHORIZED',
        path: '/v1/leads',
        message: 'Unauthorized',
      });
    });
  });

  it('gives the 429 envelope with error TOO_MANY_REQUESTS past the rate limit', async () => {
    const response = await authorized(http().get('/v1/companies?limit=5'), exhaustedKey);

    expectErrorEnvelope(response, {
      status: 429,
      error: 'TOO_MANY_REQUESTS',
      path: '/v1/companies?limit=5',
      message: expect.any(String),
    });
  });
});

import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { CompaniesService } from '../../../src/companies/companies.service';
import { COMPRESSION } from '../../../src/http/compression';
import { jsonText } from '../../../src/http/json-text';
import { createTestApp, type TestApp } from '../../support/app';
import { takeContractViolations } from '../../support/contract-violations';
import { companyRow, createContact, createLead } from '../../support/factories';
import { createTenant } from '../../support/http';
import { exchange, listenOnLoopback, parseResponses } from '../../support/raw-http';

/*
 * Compression (docs/api.md, "Compression"): JSON answers of 1 KiB or more in gzip or br as
 * Accept-Encoding allows, the same bytes once decoded, an exact Content-Length, HEAD with the
 * GET's headers, `Vary: Accept-Encoding` on every answer, small answers plain. Requests go
 * through node:http without any decoding, so that the bytes on the wire are what is checked.
 */

let t: TestApp;
let port: number;
let key: string;
let companyId: string;

// Forty companies with their contacts and leads in few round trips, all but the companies' at
// once: a heavy file beside this one (built/large-pages) makes each round trip slow.
beforeAll(async () => {
  t = await createTestApp({ env: { RATE_LIMIT_PER_MINUTE: '100000' } });
  port = await listenOnLoopback(t.app);
  const tenant = await createTenant(t.prisma);
  key = tenant.key;
  const workspaceId = tenant.workspace.id;
  const companies = Array.from({ length: 40 }, (_, i) =>
    companyRow(workspaceId, { intentScore: i }),
  );
  await t.prisma.company.createMany({ data: companies });
  await Promise.all(
    companies.flatMap((row, i) => {
      const company = { id: String(row.id), workspaceId };
      return [
        createContact(t.prisma, company, { email: `ana.${i}@company.example` }),
        createContact(t.prisma, company),
        createLead(t.prisma, company),
      ];
    }),
  );
  companyId = String(companies[companies.length - 1].id);
}, 60_000);

afterAll(async () => {
  await t.close();
});

interface Raw {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body exactly as received. */
  bytes: Buffer;
}

function get(path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      {
        host: '127.0.0.1',
        port,
        path,
        method,
        headers: { Authorization: `Bearer ${key}`, ...headers },
        agent: false,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            bytes: Buffer.concat(chunks),
          }),
        );
        response.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end();
  });
}

function decoded({ headers, bytes }: Raw): string {
  const coding = headers['content-encoding'];
  if (coding === 'br') return brotliDecompressSync(bytes).toString('utf8');
  if (coding === 'gzip') return gunzipSync(bytes).toString('utf8');
  expect(coding).toBeUndefined();
  return bytes.toString('utf8');
}

function expectVary(headers: IncomingHttpHeaders): void {
  expect(String(headers.vary ?? '').split(/\s*,\s*/)).toContain('Accept-Encoding');
}

const PAGE = '/v1/companies?limit=200';

describe('a JSON answer of 1 KiB or more', () => {
  let plain: string;

  beforeAll(async () => {
    const response = await get(PAGE);
    plain = decoded(response);
    expect(response.headers['content-encoding']).toBeUndefined();
    expect(Buffer.byteLength(plain)).toBeGreaterThan(10 * COMPRESSION.thresholdBytes);
  });

  it.each([
    ['br', 'br'],
    ['gzip', 'gzip'],
    ['gzip, br', 'br'],
    ['gzip, deflate, br', 'br'],
    ['br;q=0.5, gzip', 'gzip'],
    ['gzip;q=0.2, br;q=0.1', 'gzip'],
    ['x-gzip', 'gzip'],
    ['*', 'br'],
    ['br;q=0, *', 'gzip'],
    ['identity', undefined],
    ['gzip;q=0, br;q=0', undefined],
    ['*;q=0', undefined],
    ['deflate', undefined],
    ['gzip;q=0.5, identity', undefined],
    ['', undefined],
  ])(
    'Accept-Encoding %j: Content-Encoding %s, the same JSON once decoded',
    async (accept, coding) => {
      const response = await get(PAGE, { 'Accept-Encoding': accept });

      expect(response.status).toBe(200);
      expect(response.headers['content-encoding']).toBe(coding);
      expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(response.headers['content-length']).toBe(String(response.bytes.length));
      expect(response.headers['transfer-encoding']).toBeUndefined();
      expectVary(response.headers);
      expect(decoded(response)).toBe(plain);
      if (coding) expect(response.bytes.length).toBeLessThan(Buffer.byteLength(plain) / 3);
    },
  );

  it.each([
    ['the change feed', '/v1/companies/changes?limit=40'],
    ['the leads', '/v1/leads?limit=200'],
    ['the OpenAPI document', '/v1/openapi.json'],
  ])('compresses %s too', async (_case, path) => {
    const plainBody = decoded(await get(path));
    const response = await get(path, { 'Accept-Encoding': 'gzip, br' });

    expect(response.status).toBe(200);
    expect(response.headers['content-encoding']).toBe('br');
    expect(response.headers['content-length']).toBe(String(response.bytes.length));
    const body = decoded(response);
    // A feed read without a cursor may start a new pass at a moving horizon: compare the data.
    if (path.includes('/changes')) {
      const data = (text: string) => (JSON.parse(text) as { data: unknown }).data;
      expect(data(body)).toStrictEqual(data(plainBody));
    } else {
      expect(body).toBe(plainBody);
    }
  });

  it('HEAD: the headers of the GET, compressed length included, and no body', async () => {
    const accept = { 'Accept-Encoding': 'gzip' };
    const got = await get(PAGE, accept);
    const head = await get(PAGE, accept, 'HEAD');

    expect(head.status).toBe(200);
    expect(head.bytes).toHaveLength(0);
    for (const name of ['content-encoding', 'content-length', 'content-type', 'vary']) {
      expect(head.headers[name]).toBe(got.headers[name]);
    }
    expect(head.headers['content-encoding']).toBe('gzip');
  });
});

describe('small answers and every other answer', () => {
  it.each([
    ['/v1/me', () => '/v1/me', 200],
    ['a company', () => `/v1/companies/${companyId}`, 200],
    ['a 400', () => '/v1/companies?limit=0', 400],
    ['an unknown path', () => '/v1/nowhere', 404],
    ['/health/live', () => '/health/live', 200],
  ])('%s: plain under 1 KiB, with Vary', async (_case, path, status) => {
    const response = await get(path(), { 'Accept-Encoding': 'gzip, br' });

    expect(response.status).toBe(status);
    expectVary(response.headers);
    expect(response.bytes.length).toBeLessThan(COMPRESSION.thresholdBytes);
    expect(response.headers['content-encoding']).toBeUndefined();
    expect(() => JSON.parse(response.bytes.toString('utf8')) as unknown).not.toThrow();
  });

  it('a 401 is plain, with Vary', async () => {
    const response = await get('/v1/companies?limit=200', {
      Authorization: 'Bearer st_nope',
      'Accept-Encoding': 'br',
    });

    expect(response.status).toBe(401);
    expect(response.headers['content-encoding']).toBeUndefined();
    expectVary(response.headers);
  });

  it('a request the HTTP parser refuses gets Vary too', async () => {
    const { received } = await exchange(
      port,
      'GET /v1/me HTTP/1.1\r\nHost: x\r\nX: a\u0000b\r\n\r\n',
    );
    const [response] = parseResponses(received);

    expect(response.status).toBe(400);
    expect(response.headers.vary).toBe('Accept-Encoding');
  });

  it('/docs and its assets carry Vary', async () => {
    const response = await get('/docs', { 'Accept-Encoding': 'gzip' });

    expect(response.status).toBe(200);
    expectVary(response.headers);
  });
});

it('the contract check still reads the JSON of a compressed answer', async () => {
  // A body that breaks the schema, sent compressed: the check sees the JSON before compression.
  const big = 'x'.repeat(2 * COMPRESSION.thresholdBytes);
  jest.spyOn(CompaniesService.prototype, 'list').mockResolvedValueOnce({
    json: jsonText(JSON.stringify({ total: 1, limit: 50, offset: 0, data: [{ id: big }] })),
    version: '1',
  });

  const response = await get('/v1/companies', { 'Accept-Encoding': 'br' });

  expect(response.headers['content-encoding']).toBe('br');
  expect(takeContractViolations()).toEqual([
    expect.stringMatching(/^GET \/v1\/companies -> 200: .*data\/0 must have required property/),
  ]);
});

import { MAX_REQUEST_HEADERS } from '../../../src/http/header-count';
import { DOCS_PATH } from '../../../src/http/security-headers';
import { LOG_DESTINATION } from '../../../src/logging/logging.module';
import { createTestApp, type TestApp } from '../../support/app';
import { createTenant, ISO_UTC_MILLIS } from '../../support/http';
import {
  exchange,
  listenOnLoopback,
  parseResponses,
  send,
  type ParsedResponse,
  type RawResponse,
} from '../../support/raw-http';
import { until } from '../../support/until';

/*
 * HTTP-level hygiene against a listening server, with raw connections where a client library
 * would refuse to send the request or would rewrite it: security headers, methods other than GET,
 * bodies where none is expected, requests Node's parser refuses, absurd paths. Every answer has a
 * sane status and, when it has a body, the contract's envelope; the server answers afterwards.
 * (response-headers.e2e-spec.ts covers the contract's own headers and request ids;
 * errors.e2e-spec.ts the 404, 500 and 503 envelopes.)
 */
let t: TestApp;
let port: number;
let key: string;
/** The request log's lines, parsed. */
const logLines: { requestId?: string; statusCode?: number; msg?: string }[] = [];

beforeAll(async () => {
  // Many requests without a key from one address, and many with one key.
  t = await createTestApp({
    env: {
      AUTH_FAILURE_LIMIT_PER_MINUTE: '1000000',
      RATE_LIMIT_PER_MINUTE: '1000000',
      LOG_LEVEL: 'info',
    },
    customize: (builder) => {
      builder.overrideProvider(LOG_DESTINATION).useValue({
        write: (line: string) => void logLines.push(JSON.parse(line) as (typeof logLines)[number]),
      });
    },
  });
  port = await listenOnLoopback(t.app);
  ({ key } = await createTenant(t.prisma));
});

afterAll(async () => {
  await t.close();
});

const withKey = (headers: Record<string, string> = {}) => ({
  Authorization: `Bearer ${key}`,
  ...headers,
});

/** A request on the wire, with the key unless `headers` says otherwise. */
function wire(requestLine: string, headers: string[] = [`Authorization: Bearer ${key}`]): string {
  return [requestLine, 'Host: localhost', ...headers, '', ''].join('\r\n');
}

/** The server still serves a plain request, on a new connection. */
async function expectStillServing(): Promise<void> {
  const response = await send(port, '/v1/me', { headers: withKey() });
  expect(response.status).toBe(200);
}

// The fixed texts of the envelope (all-exceptions.filter.ts, client-error.ts): never the request.
const FIXED_MESSAGES = [
  'Bad Request',
  'Unauthorized',
  'Not Found',
  'Request Header Fields Too Large',
  'Too Many Requests',
];

function expectEnvelope(response: ParsedResponse, status: number, path?: string): void {
  expect(response.status).toBe(status);
  expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(response.headers['cache-control']).toBe('no-store');
  expect(response.headers['x-content-type-options']).toBe('nosniff');
  const body = JSON.parse(response.body) as Record<string, unknown>;
  expect(body).toStrictEqual({
    statusCode: status,
    message: expect.anything(),
    error: expect.stringMatching(/^[A-Z_]+$/),
    path: path ?? expect.any(String),
    timestamp: expect.stringMatching(ISO_UTC_MILLIS),
  });
  // A fixed text, or (parameter validation) one entry per violated constraint.
  if (Array.isArray(body.message)) {
    expect(status).toBe(400);
    for (const entry of body.message) expect(typeof entry).toBe('string');
  } else {
    expect(FIXED_MESSAGES).toContain(body.message);
  }
}

const asParsed = (response: RawResponse): ParsedResponse => ({
  status: response.status,
  headers: response.headers as Record<string, string>,
  body: response.text,
});

describe('security headers', () => {
  const API_POLICY = "default-src 'none';base-uri 'none';form-action 'none';frame-ancestors 'none'";

  // [what is sent, its status]
  const SCENARIOS: [string, number, () => Promise<RawResponse>][] = [
    ['GET /v1/companies', 200, () => send(port, '/v1/companies', { headers: withKey() })],
    ['GET /v1/leads?limit=0', 400, () => send(port, '/v1/leads?limit=0', { headers: withKey() })],
    ['GET /v1/me without a key', 401, () => send(port, '/v1/me')],
    ['GET /v1/nope', 404, () => send(port, '/v1/nope', { headers: withKey() })],
    [
      'HEAD /v1/companies',
      200,
      () => send(port, '/v1/companies', { method: 'HEAD', headers: withKey() }),
    ],
    ['OPTIONS /v1/companies', 404, () => send(port, '/v1/companies', { method: 'OPTIONS' })],
  ];

  it.each(SCENARIOS)('%s (%i): the same set on every answer', async (_case, status, call) => {
    const response = await call();

    expect(response.status).toBe(status);
    expect(response.headers).toMatchObject({
      'content-type': 'application/json; charset=utf-8',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'x-frame-options': 'DENY',
      'content-security-policy': API_POLICY,
      // One year, this host only (docs/security.md says why not includeSubDomains).
      'strict-transport-security': 'max-age=31536000',
      'cross-origin-resource-policy': 'same-origin',
      'x-xss-protection': '0',
    });
    expect(response.headers).not.toHaveProperty('x-powered-by');
    // The one validator is the reads' weak ETag (docs/api.md, "Conditional requests"): on their
    // 200s only, never on an error. No Last-Modified.
    if (status === 200) expect(response.headers.etag).toMatch(/^W\/"[A-Za-z0-9_-]{27}"$/);
    else expect(response.headers).not.toHaveProperty('etag');
    expect(response.headers).not.toHaveProperty('last-modified');
  });

  it(`gives ${DOCS_PATH} (Swagger UI) a policy that lets it render, and only that`, async () => {
    for (const path of [DOCS_PATH, `${DOCS_PATH}/`, `${DOCS_PATH}/swagger-ui-init.js`]) {
      const response = await send(port, path);
      const policy = response.headers['content-security-policy'];
      expect(policy).toBe(
        "default-src 'self';script-src 'self';style-src 'self' 'unsafe-inline';" +
          "img-src 'self' data:;font-src 'self' data:;connect-src 'self';object-src 'none';" +
          "base-uri 'none';form-action 'self';frame-ancestors 'none'",
      );
      expect(response.headers['x-frame-options']).toBe('DENY');
    }
    // Paths that merely start like it are the API's.
    const lookAlike = await send(port, `${DOCS_PATH}x`);
    expect(lookAlike.headers['content-security-policy']).toBe(API_POLICY);
  });

  it('agrees with the page Swagger UI serves: scripts from files only, inline styles', async () => {
    // If @nestjs/swagger ever inlines a script, script-src 'self' would block it: this says so.
    // (docs-page.e2e-spec.ts renders the page in a browser, under this policy.)
    const page = await send(port, DOCS_PATH);
    expect(page.status).toBe(200);
    const scripts = [...page.text.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attributes, content] of scripts) {
      expect(attributes).toMatch(/\bsrc=["'](\.\/|\/docs\/)/);
      expect(content.trim()).toBe('');
    }
    expect(page.text).toMatch(/<style>/);
    expect(page.text).not.toMatch(/\son[a-z]+=/i);
    expect(page.text).not.toMatch(/(src|href)=["']https?:/);
  });

  it('answers If-None-Match with a 304 without body nor JSON type; If-Modified-Since is ignored', async () => {
    const first = await send(port, '/v1/companies', { headers: withKey() });
    const conditional = await send(port, '/v1/companies', {
      headers: withKey({ 'If-None-Match': first.headers.etag as string }),
    });
    expect(conditional.status).toBe(304);
    expect(conditional.text).toBe('');
    expect(conditional.headers).not.toHaveProperty('content-type');
    expect(conditional.headers.etag).toBe(first.headers.etag);

    // No Last-Modified is sent, so no date is a validator: the page in full.
    const dated = await send(port, '/v1/companies', {
      headers: withKey({ 'If-Modified-Since': new Date(Date.now() + 86_400_000).toUTCString() }),
    });
    expect(dated.status).toBe(200);
    expect(dated.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(JSON.parse(dated.text)).toMatchObject({ total: 0, data: [] });
  });
});

describe('methods other than GET', () => {
  describe.each(['/v1/companies', '/v1/leads', '/v1/me'])('HEAD %s', (path) => {
    it('gives the headers of the GET, and no body', async () => {
      const get = await send(port, path, { headers: withKey() });
      const head = await send(port, path, { method: 'HEAD', headers: withKey() });

      expect(head.status).toBe(get.status);
      expect(head.text).toBe('');
      // All but what differs from one request to the next.
      const comparable = (response: RawResponse) =>
        Object.entries(response.headers).filter(
          ([name]) =>
            !['date', 'x-request-id', 'x-ratelimit-remaining', 'ratelimit'].includes(name),
        );
      expect(comparable(head)).toStrictEqual(comparable(get));
    });

    it('sends no body bytes on the wire: the next response follows the headers', async () => {
      const { received } = await exchange(
        port,
        wire(`HEAD ${path} HTTP/1.1`) +
          wire('GET /v1/me HTTP/1.1', [`Authorization: Bearer ${key}`, 'Connection: close']),
      );

      const end = received.indexOf('\r\n\r\n');
      expect(received.slice(0, end)).toMatch(/^HTTP\/1\.1 200 /);
      expect(received.slice(end + 4)).toMatch(/^HTTP\/1\.1 200 /);
    });
  });

  it('HEAD without a key: the 401 headers, no body', async () => {
    const head = await send(port, '/v1/leads', { method: 'HEAD' });

    expect(head.status).toBe(401);
    expect(head.headers['www-authenticate']).toBe('Bearer');
    expect(head.text).toBe('');
  });

  // Read-only API with no browser clients (a key in a web page is a leaked key): no CORS, and
  // OPTIONS is an unknown method like the others, the 404 envelope, rather than Express's
  // automatic `200 GET,HEAD` in text/plain.
  it.each([
    ['/v1/companies', true],
    ['/v1/companies', false],
    ['/v1/me?limit=1', true],
    ['/nope', false],
    ['*', false],
  ])('OPTIONS %s (key: %s): the 404 envelope, no Allow, no CORS', async (path, authorized) => {
    const response = await send(port, path, {
      method: 'OPTIONS',
      headers: {
        ...(authorized ? withKey() : {}),
        Origin: 'https://evil.example',
        'Access-Control-Request-Method': 'GET',
      },
    });

    expectEnvelope(asParsed(response), 404, path);
    expect(response.headers).not.toHaveProperty('allow');
    expect(
      Object.keys(response.headers).filter((name) => name.startsWith('access-control')),
    ).toEqual([]);
  });

  it.each(['PROPFIND', 'TRACE', 'MKCOL', 'LOCK', 'SEARCH', 'PURGE'])(
    '%s: the 404 envelope, and nothing of the request echoed',
    async (method) => {
      const response = await send(port, '/v1/me', {
        method,
        headers: withKey({ 'X-Probe': 'echo-me-if-you-can' }),
      });

      expectEnvelope(asParsed(response), 404, '/v1/me');
      expect(response.text).not.toContain('echo-me-if-you-can');
      expect(response.text).not.toContain(key);
    },
  );

  it.each([
    ['a method HTTP does not know', 'FOO /v1/me HTTP/1.1'],
    ['a method in lower case', 'get /v1/me HTTP/1.1'],
    ['no method', '/v1/me HTTP/1.1'],
  ])('%s: Node refuses it, with the 400 envelope, and closes', async (_case, line) => {
    const { received, closedByServer } = await exchange(port, wire(line));

    const [response, ...more] = parseResponses(received);
    expectEnvelope(response, 400, '');
    expect(response.headers['connection']).toBe('close');
    expect(more).toEqual([]);
    expect(closedByServer).toBe(true);
    await expectStillServing();
  });

  it('CONNECT: this is not a proxy; the connection is closed, and nothing else happens', async () => {
    const { received, closedByServer } = await exchange(
      port,
      'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n',
    );

    expect(received).toBe('');
    expect(closedByServer).toBe(true);
    await expectStillServing();
  });

  it('an Upgrade request is served as a plain GET', async () => {
    const { received } = await exchange(
      port,
      wire('GET /v1/me HTTP/1.1', [
        `Authorization: Bearer ${key}`,
        'Connection: Upgrade, close',
        'Upgrade: websocket',
        'Sec-WebSocket-Version: 13',
        'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
      ]),
    );

    const statuses = parseResponses(received).map((response) => response.status);
    expect(statuses.every((status) => status === 200 || status === 404)).toBe(true);
    expect(received).not.toMatch(/^HTTP\/1\.1 101/);
    await expectStillServing();
  });
});

/** The request log's line for the answer with this X-Request-Id (written as the answer ends). */
async function logLineOf(requestId: string) {
  return until(
    `the request line of ${requestId}`,
    () => {
      const line = logLines.find((entry) => entry.requestId === requestId && entry.msg);
      return line?.msg?.startsWith('request ') ? line : undefined;
    },
    { everyMs: 10 },
  );
}

it('logs a line for every answer: /docs, its files, its redirect and its 404s included', async () => {
  for (const [path, status] of [
    ['/docs', 200],
    ['/docs/swagger-ui.css', 200],
    ['/docs/', 308],
    ['/docs/package.json', 404],
    ['/v1/nope', 404],
  ] as const) {
    const requestId = `logged-${status}-${path.length}`;
    const response = await send(port, path, { headers: { 'X-Request-Id': requestId } });
    expect(response.status).toBe(status);
    expect(await logLineOf(requestId)).toMatchObject({ statusCode: status });
  }
});

it('evaluates If-None-Match on the reads of /v1 only, and no other precondition anywhere', async () => {
  const preconditions: Record<string, string>[] = [
    { 'If-None-Match': '*' },
    { 'If-None-Match': 'W/"x", "y"' },
    { 'If-Modified-Since': new Date(Date.now() + 3_600_000).toUTCString() },
    { 'If-Match': '"nope"', 'If-Unmodified-Since': 'Thu, 01 Jan 1970 00:00:00 GMT' },
    { 'If-Range': '"nope"' },
  ];
  // `*` matches any current answer (RFC 9110, 13.1.2): a 304 where the API sends a validator.
  const withValidator = ['/v1/me', '/v1/companies', '/v1/openapi.json'];
  for (const path of [...withValidator, '/health/ready', '/docs']) {
    for (const headers of preconditions) {
      const response = await send(port, path, { headers: { ...withKey(), ...headers } });
      const notModified = withValidator.includes(path) && headers['If-None-Match'] === '*';
      expect([path, headers, response.status]).toEqual([path, headers, notModified ? 304 : 200]);
      expect(response.text.length > 0).toBe(!notModified);
      if (withValidator.includes(path)) expect(response.headers.etag).toMatch(/^W\/"/);
      else expect(response.headers.etag).toBeUndefined();
      expect(response.headers['last-modified']).toBeUndefined();
    }
  }
});

describe('header lines', () => {
  const lines = (count: number, line = (i: number) => `X-Filler-${i}: ${i}`) =>
    Array.from({ length: count }, (_, i) => line(i));

  it(`serves ${MAX_REQUEST_HEADERS} header lines (Host and the key among them)`, async () => {
    const { received } = await exchange(
      port,
      wire('GET /v1/me HTTP/1.1', [
        `Authorization: Bearer ${key}`,
        'Connection: close',
        ...lines(MAX_REQUEST_HEADERS - 3),
      ]),
    );
    expect(parseResponses(received)[0].status).toBe(200);
  });

  it.each([
    [`${MAX_REQUEST_HEADERS + 1} lines`, lines(MAX_REQUEST_HEADERS - 2), false],
    // Node keeps the first 2,000 and drops the rest silently: a key after them would be a 401.
    ['2,001 lines, the key last', lines(1_999, (i) => `${((i % 26) + 10).toString(36)}:`), true],
    // Empty values: on Node 20, 16,000 lines of 4 bytes pass the 16 KiB bound on header bytes.
    ['16,000 empty lines', lines(16_000, (i) => `${((i % 26) + 10).toString(36)}:`), true],
  ])(
    '%s: 431 with the envelope, the headers of every answer and a log line',
    async (_, extra, parserMay) => {
      const requestId = `headers-${extra.length}`;
      const { received, closedByServer } = await exchange(
        port,
        wire('GET /v1/me HTTP/1.1', [
          `X-Request-Id: ${requestId}`,
          'Connection: close',
          ...extra,
          `Authorization: Bearer ${key}`,
        ]),
      );

      const [response] = parseResponses(received);
      expect(JSON.parse(response.body)).toMatchObject({
        message: 'Request Header Fields Too Large',
        error: 'REQUEST_HEADER_FIELDS_TOO_LARGE',
      });
      if (parserMay && (JSON.parse(response.body) as { path: string }).path === '') {
        // Node 24's parser counts these lines' bytes against the 16 KiB bound and refuses them
        // itself (client-error.ts): the envelope with an empty path, and the connection closed.
        expectEnvelope(response, 431, '');
        expect(closedByServer).toBe(true);
      } else {
        expectEnvelope(response, 431, '/v1/me');
        expect(response.headers['x-request-id']).toBe(requestId);
        expect(response.headers['content-security-policy']).toBeDefined();
        expect(await logLineOf(requestId)).toMatchObject({ statusCode: 431 });
      }
      await expectStillServing();
    },
  );
});

describe('Expect', () => {
  it.each(['something-else', '200-ok', 'x'])(
    'Expect: %s is served as any request: the answer, its headers and a log line, never a bare 417',
    async (expectation) => {
      for (const [headers, status] of [
        [[`Authorization: Bearer ${key}`, `Expect: ${expectation}`, 'Connection: close'], 200],
        [[`Expect: ${expectation}`, 'Connection: close'], 401],
      ] as const) {
        const { received } = await exchange(port, wire('GET /v1/me HTTP/1.1', [...headers]));
        const [response] = parseResponses(received);
        expect(response.status).toBe(status);
        expect(response.headers['x-request-id']).toBeDefined();
        expect(response.headers['x-content-type-options']).toBe('nosniff');
        if (status === 401) expect(JSON.parse(response.body)).toMatchObject({ statusCode: 401 });
      }
    },
  );
});

describe('bodies where none is expected', () => {
  const BODY = '{"limit":500,"since":"yesterday"}';
  const next = () =>
    wire('GET /v1/me HTTP/1.1', [`Authorization: Bearer ${key}`, 'Connection: close']);

  it.each([
    ['GET', '/v1/companies', 200],
    ['HEAD', '/v1/companies', 200],
    ['OPTIONS', '/v1/companies', 404],
    ['GET', '/v1/nope', 404],
  ])(
    '%s %s with a body: answered, and the body is not read as the next request',
    async (method, path, status) => {
      const request = wire(`${method} ${path} HTTP/1.1`, [
        `Authorization: Bearer ${key}`,
        'Content-Type: application/json',
        `Content-Length: ${BODY.length}`,
      ]);

      const { received } = await exchange(port, request + BODY + next());

      const end = received.indexOf('\r\n\r\n');
      expect(received).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
      // Two answers: this one and the pipelined GET, never one to a request made of the body.
      const after = method === 'HEAD' ? received.slice(end + 4) : received;
      const responses = method === 'HEAD' ? parseResponses(after) : parseResponses(after).slice(1);
      expect(responses.map((response) => response.status)).toStrictEqual([200]);
    },
  );

  it('a chunked body on a GET: answered, and the next request too', async () => {
    const request = wire('GET /v1/companies HTTP/1.1', [
      `Authorization: Bearer ${key}`,
      'Transfer-Encoding: chunked',
    ]);
    const chunked = `${BODY.length.toString(16)}\r\n${BODY}\r\n0\r\n\r\n`;

    const { received } = await exchange(port, request + chunked + next());

    expect(parseResponses(received).map((response) => response.status)).toStrictEqual([200, 200]);
  });

  it('a 1 MB body on a GET: answered, and the server keeps serving', async () => {
    const size = 1024 * 1024;
    const request = wire('GET /v1/me HTTP/1.1', [
      `Authorization: Bearer ${key}`,
      `Content-Length: ${size}`,
      'Connection: close',
    ]);

    const { received } = await exchange(
      port,
      Buffer.concat([Buffer.from(request), Buffer.alloc(size, 'a')]),
    );

    expect(parseResponses(received).map((response) => response.status)).toStrictEqual([200]);
    await expectStillServing();
  });

  // Request smuggling: two ways to say where the body ends must not both be believed.
  it.each([
    ['Content-Length and Transfer-Encoding', ['Content-Length: 4', 'Transfer-Encoding: chunked']],
    ['two different Content-Lengths', ['Content-Length: 4', 'Content-Length: 40']],
    ['an obfuscated Transfer-Encoding', ['Transfer-Encoding: xchunked', 'Content-Length: 4']],
  ])(
    '%s: the 400 envelope, the connection closed, the smuggled request never answered',
    async (_case, framing) => {
      const smuggled = wire('GET /v1/leads HTTP/1.1');
      const request = wire('GET /v1/me HTTP/1.1', [`Authorization: Bearer ${key}`, ...framing]);

      const { received, closedByServer } = await exchange(port, `${request}0\r\n\r\n${smuggled}`);

      const responses = parseResponses(received);
      expect(responses).toHaveLength(1);
      expectEnvelope(responses[0], 400, '');
      expect(closedByServer).toBe(true);
      await expectStillServing();
    },
  );
});

describe('oversized requests (Node: 16 KiB of request line and headers)', () => {
  it.each([
    ['a header of 20 kB', wire('GET /v1/me HTTP/1.1', [`X-Big: ${'a'.repeat(20_000)}`])],
    ['a URL of 20 kB', wire(`GET /v1/companies?${'a'.repeat(20_000)} HTTP/1.1`)],
    ['a path of 20 kB', wire(`GET /${'a'.repeat(20_000)} HTTP/1.1`)],
    [
      'an Authorization of 20 kB',
      wire('GET /v1/me HTTP/1.1', [`Authorization: Bearer st_${'A'.repeat(20_000)}`]),
    ],
    [
      '2000 small headers',
      wire(
        'GET /v1/me HTTP/1.1',
        Array.from({ length: 2000 }, (_, i) => `X-H${i}: ${i}`),
      ),
    ],
  ])('%s: 431 with the envelope, the connection closed', async (_case, request) => {
    const { received, closedByServer } = await exchange(port, request);

    const [response, ...more] = parseResponses(received);
    expectEnvelope(response, 431, '');
    expect(JSON.parse(response.body)).toMatchObject({ error: 'REQUEST_HEADER_FIELDS_TOO_LARGE' });
    expect(more).toEqual([]);
    expect(closedByServer).toBe(true);
    await expectStillServing();
  });

  it('2500 distinct unknown parameters (the most the limit allows): one entry each', async () => {
    // The query parser keeps every pair (query-string.ts); the 16 KiB limit is what bounds them.
    const names = Array.from({ length: 2500 }, (_, i) => `p${i.toString(36)}`);
    const path = `/v1/companies?${names.join('&')}`;

    const response = await send(port, path, { headers: withKey() });

    expect(response.status).toBe(400);
    const { message } = JSON.parse(response.text) as { message: string[] };
    expect(message).toHaveLength(names.length);
    expect(message).toContain(`property ${names[2499]} should not exist`);
    await expectStillServing();
  });

  it('a URL just under the limit is an ordinary request: the 404 envelope, path repeated', async () => {
    const path = `/${'a'.repeat(15_000)}`;

    const response = await send(port, path, { headers: withKey() });

    expectEnvelope(asParsed(response), 404, path);
  });
});

describe('absurd request lines', () => {
  it.each([
    ['a NUL byte in the path', 'GET /v1/comp\0anies HTTP/1.1'],
    ['a space in the path', 'GET /v1/comp anies HTTP/1.1'],
    ['a raw non-ASCII byte in the query', 'GET /v1/companies?since=\u00e9 HTTP/1.1'],
    ['a control character in the query', 'GET /v1/companies?limit=1\u0001 HTTP/1.1'],
    ['an HTTP version that does not exist', 'GET /v1/me HTTP/9.9'],
    ['garbage', '\u0016\u0003\u0001\u0002\u0000\u0001\u0000\u0001\u00fc\u0003\u0003'],
  ])('%s: the 400 envelope, the connection closed', async (_case, line) => {
    const { received, closedByServer } = await exchange(port, wire(line));

    const [response, ...more] = parseResponses(received);
    expectEnvelope(response, 400, '');
    expect(more).toEqual([]);
    expect(closedByServer).toBe(true);
    await expectStillServing();
  });

  it.each([
    ['a NUL byte in a header value', ['X-A: a\0b']],
    ['a header without a colon', ['Not a header']],
    ['a space before the colon', ['X-A : b']],
    ['a bare LF in a header', ['X-A: a\nX-B: b']],
  ])('%s: the 400 envelope, the connection closed', async (_case, headers) => {
    const { received, closedByServer } = await exchange(
      port,
      wire('GET /v1/me HTTP/1.1', [`Authorization: Bearer ${key}`, ...headers]),
    );

    const [response, ...more] = parseResponses(received);
    expectEnvelope(response, 400, '');
    expect(more).toEqual([]);
    expect(closedByServer).toBe(true);
    await expectStillServing();
  });

  it('a request line without a version (read as HTTP/0.9): served, then closed', async () => {
    const { received, closedByServer } = await exchange(port, wire('GET /v1/me'));

    expect(parseResponses(received).map((response) => response.status)).toStrictEqual([200]);
    expect(closedByServer).toBe(true);
  });

  it('HTTP/1.1 without Host: Node refuses it with a bare 400 and an empty body', async () => {
    const { received, closedByServer } = await exchange(
      port,
      `GET /v1/me HTTP/1.1\r\nAuthorization: Bearer ${key}\r\n\r\n`,
    );

    // Answered by Node before the application sees the request: no envelope, but nothing else.
    expect(received).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(received).toMatch(/\r\n\r\n0\r\n\r\n$/);
    expect(closedByServer).toBe(true);
    await expectStillServing();
  });

  // Paths that name no resource, or name one oddly: a sane status, the envelope, the path repeated
  // as sent, and a fixed message (never the path it could not decode).
  it.each([
    ['/v1/companies%00', [404]],
    ['/v1/%2e%2e/me', [404]],
    ['/v1/companies/..%2Fme', [404]],
    ['/v1/../v1/me', [200, 404]],
    ['//v1/me', [404]],
    ['/v1/me/', [200]],
    ['/V1/ME', [200, 404]],
    ['/v1/me;jsessionid=1', [404]],
    ['/v1/companies/%E0%A4%A', [400, 404]],
    ['/v1/%ZZ', [400, 404]],
    ['/%F0%9F%98%80', [404]],
    ['/v1/me?%', [400]],
    ['*', [404]],
    ['http://evil.example/v1/me', [200]],
  ])('GET %s: one of %j', async (path, statuses) => {
    const response = await send(port, path, { headers: withKey() });

    expect(statuses).toContain(response.status);
    if (response.status !== 200) expectEnvelope(asParsed(response), response.status, path);
    await expectStillServing();
  });
});

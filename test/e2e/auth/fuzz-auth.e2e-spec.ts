import fc from 'fast-check';
import { Agent } from 'node:http';
import { createTestApp, type TestApp } from '../../support/app';
import { BASE62, withChecksum } from '../../support/api-key-format';
import { createApiKey, createWorkspace } from '../../support/factories';
import { propertyOptions } from '../../support/fast-check';
import { listenOnLoopback, send, type RawResponse } from '../../support/raw-http';

/*
 * Generated Authorization headers: every one that is not exactly one `Bearer <the valid key>`
 * gets the one 401, byte for byte (apart from `path` and `timestamp`), with the same header names
 * as the 401 of a request without a key: nothing tells a revoked key from garbage.
 */
const RUNS = 1000;
const ENDPOINTS = ['/v1/me', '/v1/companies', '/v1/leads', '/v1/companies?limit=0&foo=1'];
const UNAUTHORIZED_BODY =
  '{"statusCode":401,"message":"Unauthorized","error":"UNAUTHORIZED","path":"","timestamp":""}';

let t: TestApp;
let port: number;
const agent = new Agent({ keepAlive: true, maxSockets: 1 });
let keys: { valid: string; revoked: string; starter: string; suspended: string };
let workspace: { id: string; name: string; plan: string };
/** Per endpoint, the header names of the 401 to a request without Authorization. */
const referenceHeaderNames = new Map<string, string[]>();

beforeAll(async () => {
  // Thousands of refusals from one address: the auth-failure limit (rate-limit.e2e-spec.ts) would
  // answer 429 long before the end; the per-key limit would stop the valid key.
  t = await createTestApp({
    env: { AUTH_FAILURE_LIMIT_PER_MINUTE: '1000000', RATE_LIMIT_PER_MINUTE: '1000000' },
  });
  port = await listenOnLoopback(t.app);
  const growth = await createWorkspace(t.prisma, { name: 'Growth Co', plan: 'growth' });
  const starter = await createWorkspace(t.prisma, { plan: 'starter' });
  const suspended = await createWorkspace(t.prisma, { plan: 'growth', suspended: true });
  workspace = { id: growth.id, name: growth.name, plan: growth.plan };
  keys = {
    valid: (await createApiKey(t.prisma, growth.id)).key,
    revoked: (await createApiKey(t.prisma, growth.id, { revokedAt: new Date('2026-01-01') })).key,
    starter: (await createApiKey(t.prisma, starter.id)).key,
    suspended: (await createApiKey(t.prisma, suspended.id)).key,
  };
  for (const path of ENDPOINTS) {
    const reference = await get(path, undefined);
    expect(reference.status).toBe(401);
    referenceHeaderNames.set(path, headerNames(reference));
  }
});

afterAll(async () => {
  agent.destroy();
  await t.close();
});

function get(path: string, authorization: string[] | undefined): Promise<RawResponse> {
  return send(port, path, {
    agent,
    headers: authorization === undefined ? {} : { Authorization: authorization },
  });
}

const headerNames = (response: RawResponse) => Object.keys(response.headers).sort();

function withoutPathAndTimestamp(text: string): string {
  return text
    .replace(/"path":"(?:[^"\\]|\\.)*"/, '"path":""')
    .replace(/"timestamp":"[^"]*"/, '"timestamp":""');
}

/**
 * The contract's rule, written independently of the guard: accepted only when there is exactly
 * one Authorization field whose value, once HTTP strips its surrounding spaces and tabs, is the
 * Bearer scheme (any case), one space, and the valid key.
 */
function isAccepted(authorization: string[] | undefined): boolean {
  if (authorization?.length !== 1) return false;
  const value = authorization[0].replace(/^[ \t]+|[ \t]+$/g, '');
  const match = /^bearer (.*)$/is.exec(value);
  return match?.[1] === keys.valid;
}

// ---- Generated headers ------------------------------------------------------------------------

// What Node lets a client put in a header value: tab, printable ASCII, and latin1 bytes.
const HEADER_CHARS = [
  '\t',
  ...Array.from({ length: 0x7f - 0x20 }, (_, i) => String.fromCharCode(0x20 + i)),
  '\u0080',
  '\u00a0',
  '\u00e9',
  '\u00ff',
];
const garbage = (maxLength: number) =>
  fc.string({ unit: fc.constantFrom(...HEADER_CHARS), maxLength });
const base62 = (minLength: number, maxLength: number) =>
  fc.string({ unit: fc.constantFrom(...BASE62), minLength, maxLength });

type Keys = typeof keys;

/** The generated Authorization fields (none, one, or several), around the keys of `k`. */
function authorizationFieldsAround(k: Keys): fc.Arbitrary<string[] | undefined> {
  const knownKey = fc.constantFrom(k.valid, k.revoked, k.starter, k.suspended);

  // One character of a real key replaced by any header character (sometimes by itself).
  const flipped = fc
    .tuple(knownKey, fc.nat(60), fc.constantFrom(...BASE62, ...HEADER_CHARS))
    .map(([real, at, c]) => {
      const i = at % real.length;
      return real.slice(0, i) + c + real.slice(i + 1);
    });

  const credential = fc.oneof(
    { weight: 3, arbitrary: knownKey },
    { weight: 4, arbitrary: flipped },
    // Well-formed (right prefix, alphabet, length and checksum) but issued to nobody.
    { weight: 3, arbitrary: base62(32, 60).map((random) => withChecksum(`st_${random}`)) },
    // A real key's first characters, then other random characters and a valid checksum.
    {
      weight: 2,
      arbitrary: fc
        .tuple(knownKey, fc.integer({ min: 3, max: 34 }), base62(1, 40))
        .map(([real, keep, tail]) => withChecksum(real.slice(0, keep) + tail)),
    },
    // Cut, extended, re-cased, or with another prefix.
    {
      weight: 2,
      arbitrary: fc
        .tuple(knownKey, fc.constantFrom('cut', 'extend', 'upper', 'lower', 'prefix'), base62(1, 3))
        .map(([real, change, extra]) => {
          if (change === 'cut') return real.slice(0, -extra.length);
          if (change === 'extend') return real + extra;
          if (change === 'upper') return real.toUpperCase();
          if (change === 'lower') return real.toLowerCase();
          return `${extra}_${real.slice(3)}`;
        }),
    },
    { weight: 2, arbitrary: garbage(60) },
    { weight: 1, arbitrary: fc.nat(8000).map((n) => `st_${'A'.repeat(n)}`) },
  );

  const scheme = fc.constantFrom(
    'Bearer',
    'bearer',
    'BEARER',
    'bEaReR',
    'Basic',
    'Token',
    'Digest',
    'Bearer:',
    'Bearer,',
    'Bear',
    'Bearerx',
    'Bearer=',
    '',
  );
  const spacing = fc.constantFrom(' ', ' ', ' ', '  ', '\t', '', ' \t');
  const generated = fc
    .tuple(fc.constantFrom('', ' ', '\t'), scheme, spacing, credential, garbage(3))
    .map((parts) => parts.join(''));
  // Often the one accepted form, so that a field next to it, or a second one, gets tried too.
  const exact = fc.constantFrom('Bearer', 'bearer', 'BEARER').map((s) => `${s} ${k.valid}`);
  const field = fc.oneof({ weight: 4, arbitrary: generated }, { weight: 1, arbitrary: exact });

  return fc.oneof(
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 12, arbitrary: fc.array(field, { minLength: 1, maxLength: 1 }) },
    { weight: 2, arbitrary: fc.array(field, { minLength: 2, maxLength: 3 }) },
  );
}

// ---- The tests --------------------------------------------------------------------------------

it(`gives ${RUNS} generated Authorization headers the one 401, unless exactly the valid key`, async () => {
  await fc.assert(
    fc.asyncProperty(
      authorizationFieldsAround(keys),
      fc.constantFrom(...ENDPOINTS),
      async (authorization, path) => {
        const response = await get(path, authorization);

        if (isAccepted(authorization)) {
          expect(response.status).toBe(path.includes('foo') ? 400 : 200);
          if (path === '/v1/me') expect(JSON.parse(response.text)).toStrictEqual(workspace);
          return;
        }
        expect(response.status).toBe(401);
        expect(withoutPathAndTimestamp(response.text)).toBe(UNAUTHORIZED_BODY);
        expect(JSON.parse(response.text)).toMatchObject({ path });
        expect(response.headers['www-authenticate']).toBe('Bearer');
        expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
        expect(headerNames(response)).toStrictEqual(referenceHeaderNames.get(path));
      },
    ),
    propertyOptions(RUNS),
  );
}, 300_000);

// The shrunk counterexamples of the property above, fixed in src and kept as they were found.
describe('regressions found by the generated headers', () => {
  it.each([
    ['the valid key, then another', (k: Keys) => [`Bearer ${k.valid}`, 'Bearer x']],
    ['another, then the valid key', (k: Keys) => ['Bearer x', `Bearer ${k.valid}`]],
    ['the valid key twice', (k: Keys) => [`Bearer ${k.valid}`, `Bearer ${k.valid}`]],
  ])('two Authorization headers (%s): the one 401', async (_case, fields) => {
    const response = await get('/v1/me', fields(keys));

    expect(response.status).toBe(401);
    expect(withoutPathAndTimestamp(response.text)).toBe(UNAUTHORIZED_BODY);
  });
});

import { type INestApplication, Logger } from '@nestjs/common';
import { Client, type QueryResultRow } from 'pg';
import request from 'supertest';
import { generateApiKey } from '../../../src/auth/api-key';
import { KeyLookups } from '../../../src/auth/key-lookups';
import { API_KEY_RECORD_USES_SQL } from '../../../src/auth/api-keys.sql';
import { KeyUses } from '../../../src/auth/key-uses';
import { createTestApp, type TestApp } from '../../support/app';
import { createApiKey, createCompany, createLead, createWorkspace } from '../../support/factories';
import { Database } from '../../../src/database/database';

const ENDPOINTS = ['/v1/me', '/v1/companies', '/v1/leads'];

// The whole 401 body, byte for byte, once `path` and `timestamp` are emptied.
const UNAUTHORIZED_BODY =
  '{"statusCode":401,"message":"Unauthorized","error":"UNAUTHORIZED","path":"","timestamp":""}';
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function withoutPathAndTimestamp(text: string): string {
  return text
    .replace(/"path":"(?:[^"\\]|\\.)*"/, '"path":""')
    .replace(/"timestamp":"[^"]*"/, '"timestamp":""');
}

/** Flips one character of the random part to another base62 character: the checksum fails. */
function flipOneCharacter(key: string, index = 10): string {
  const replacement = key[index] === 'A' ? 'B' : 'A';
  return key.slice(0, index) + replacement + key.slice(index + 1);
}

interface Keys {
  valid: string;
  revoked: string;
  starter: string;
  suspended: string;
}

let t: TestApp;
let keys: Keys;
let growthWorkspace: { id: string; name: string };
let refusedKeyIds: string[];

beforeAll(async () => {
  t = await createTestApp();
  const growth = await createWorkspace(t.prisma, { name: 'Growth Co', plan: 'growth' });
  const starter = await createWorkspace(t.prisma, { name: 'Starter Co', plan: 'starter' });
  const suspended = await createWorkspace(t.prisma, {
    name: 'Suspended Co',
    plan: 'growth',
    suspended: true,
  });
  growthWorkspace = growth;
  for (const workspace of [growth, starter, suspended]) {
    const company = await createCompany(t.prisma, workspace.id);
    await createLead(t.prisma, company);
  }
  const valid = await createApiKey(t.prisma, growth.id);
  const revoked = await createApiKey(t.prisma, growth.id, { revokedAt: new Date('2026-02-01') });
  const ofStarter = await createApiKey(t.prisma, starter.id);
  const ofSuspended = await createApiKey(t.prisma, suspended.id);
  keys = {
    valid: valid.key,
    revoked: revoked.key,
    starter: ofStarter.key,
    suspended: ofSuspended.key,
  };
  refusedKeyIds = [revoked.id, ofStarter.id, ofSuspended.id];
});

afterAll(async () => {
  await t.close();
});

afterEach(() => {
  jest.restoreAllMocks();
});

function call(path: string, authorization?: string) {
  const pending = request(t.app.getHttpServer()).get(path);
  return authorization === undefined ? pending : pending.set('Authorization', authorization);
}

/** Runs `run` and tells what reached the database meanwhile: key lookups and SQL statements. */
async function databaseWorkOf(run: () => Promise<unknown>) {
  const lookups = jest.spyOn(t.app.get(KeyLookups), 'find');
  const statements = jest.spyOn(Client.prototype, 'query');
  try {
    await run();
    // The keys' uses are written after the answers: their statements count too.
    await t.app.get(KeyUses).written();
    const sql = statements.mock.calls.map(([query]) =>
      typeof query === 'string' ? query : String((query as { text?: unknown }).text),
    );
    return { lookups: lookups.mock.calls.length, sql };
  } finally {
    lookups.mockRestore();
    statements.mockRestore();
  }
}

async function expectTheUnauthorizedResponse(path: string, authorization?: string) {
  const response = await call(path, authorization);
  const reference = await call(path);

  expect(response.status).toBe(401);
  expect(withoutPathAndTimestamp(response.text)).toBe(UNAUTHORIZED_BODY);
  expect(response.body.path).toBe(path);
  expect(response.body.timestamp).toMatch(ISO_UTC);
  expect(response.headers['www-authenticate']).toBe('Bearer');
  expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
  // No header tells one refusal from another either (a rate-limit header would say "valid key").
  expect(Object.keys(response.headers).sort()).toEqual(Object.keys(reference.headers).sort());
  expect(response.headers['x-ratelimit-limit']).toBeUndefined();
  return response;
}

// [case, the Authorization header (undefined: none)]
const REFUSED: [string, (k: Keys) => string | undefined][] = [
  ['no Authorization header', () => undefined],
  ['an empty Authorization header', () => ''],
  ['the Basic scheme', () => 'Basic dXNlcjpwYXNzd29yZA=='],
  ['the Basic scheme with a valid key', (k) => `Basic ${k.valid}`],
  ['Bearer alone', () => 'Bearer'],
  ['Bearer and a space', () => 'Bearer '],
  ['two spaces before a valid key', (k) => `Bearer  ${k.valid}`],
  ['a tab before a valid key', (k) => `Bearer\t${k.valid}`],
  ['the key without a scheme', (k) => k.valid],
  ['a valid key followed by more', (k) => `Bearer ${k.valid} ${k.valid}`],
  ['a valid key twice in a list', (k) => `Bearer ${k.valid}, Bearer ${k.valid}`],
  ['a 10 kB value', () => `Bearer ${'a'.repeat(10_000)}`],
  ['a 10 kB key of the right alphabet', () => `Bearer st_${'A'.repeat(10_000)}`],
  ['a key of the right shape that does not exist', () => `Bearer ${generateApiKey()}`],
  ['a valid key with one character flipped', (k) => `Bearer ${flipOneCharacter(k.valid)}`],
  ['a valid key with its last character flipped', (k) => `Bearer ${flipOneCharacter(k.valid, 40)}`],
  ['a valid key cut short', (k) => `Bearer ${k.valid.slice(0, -1)}`],
  ['a valid key with another prefix', (k) => `Bearer sk_${k.valid.slice(3)}`],
  ['a revoked key', (k) => `Bearer ${k.revoked}`],
  ['a key of a starter workspace', (k) => `Bearer ${k.starter}`],
  ['a key of a suspended workspace', (k) => `Bearer ${k.suspended}`],
];

describe.each(ENDPOINTS)('%s', (path) => {
  it('answers 200 to the valid key (the baseline of the cases below)', async () => {
    const response = await call(path, `Bearer ${keys.valid}`);
    expect(response.status).toBe(200);
  });

  // The scheme of an Authorization header is case-insensitive (RFC 9110, 11.1).
  it.each(['bearer', 'BEARER'])('accepts the scheme written %s', async (scheme) => {
    const response = await call(path, `${scheme} ${keys.valid}`);
    expect(response.status).toBe(200);
  });

  it.each(REFUSED)('gives the one 401 for %s', async (_case, header) => {
    await expectTheUnauthorizedResponse(path, header(keys));
  });

  it('gives the same 401 to a bad key with bad parameters: authentication comes first', async () => {
    const withParameters = `${path}?limit=0&offset=-1&since=yesterday&foo=1`;
    const response = await expectTheUnauthorizedResponse(
      withParameters,
      `Bearer ${generateApiKey()}`,
    );
    expect(response.body.path).toBe(withParameters);
  });

  it('does not take the key from the query string, and does not echo it', async () => {
    const response = await call(`${path}?access_token=${keys.valid}`);
    expect(response.status).toBe(401);
    expect(withoutPathAndTimestamp(response.text)).toBe(UNAUTHORIZED_BODY);
    expect(response.body.path).toBe(`${path}?access_token=st_[REDACTED]`);
    expect(response.text).not.toContain(keys.valid);
  });
});

describe('what reaches the database', () => {
  // Refused on their shape alone: not one SQL statement.
  const NEED_A_LOOKUP = [
    'a key of the right shape that does not exist',
    'a revoked key',
    'a key of a starter workspace',
    'a key of a suspended workspace',
  ];
  const MALFORMED = REFUSED.filter(([name]) => !NEED_A_LOOKUP.includes(name));

  it('leaves out of the malformed cases only the well-formed keys', () => {
    expect(MALFORMED).toHaveLength(REFUSED.length - NEED_A_LOOKUP.length);
  });

  it.each(MALFORMED)('%s: no query at all', async (_case, header) => {
    const work = await databaseWorkOf(async () => {
      const response = await call('/v1/companies', header(keys));
      expect(response.status).toBe(401);
    });
    expect(work).toEqual({ lookups: 0, sql: [] });
  });

  it('a well-formed key that does not exist: exactly one lookup, and no write', async () => {
    const work = await databaseWorkOf(async () => {
      const response = await call('/v1/companies', `Bearer ${generateApiKey()}`);
      expect(response.status).toBe(401);
    });
    expect(work.lookups).toBe(1);
    expect(work.sql.length).toBeGreaterThan(0);
    expect(work.sql.every((sql) => /^\s*SELECT\b/i.test(sql))).toBe(true);
  });

  it.each([
    ['revoked', (k: Keys) => k.revoked],
    ['starter', (k: Keys) => k.starter],
    ['suspended', (k: Keys) => k.suspended],
  ])('a %s key: one lookup, and neither a write nor a list query', async (_case, key) => {
    const work = await databaseWorkOf(async () => {
      const response = await call('/v1/companies', `Bearer ${key(keys)}`);
      expect(response.status).toBe(401);
    });
    expect(work.lookups).toBe(1);
    expect(work.sql.every((sql) => /^\s*SELECT\b/i.test(sql))).toBe(true);
    expect(work.sql.join('\n')).not.toContain('"companies"');
  });

  it('a refused key is not marked as used', async () => {
    for (const key of [keys.revoked, keys.starter, keys.suspended]) {
      expect((await call('/v1/me', `Bearer ${key}`)).status).toBe(401);
    }
    const refused = await t.prisma.apiKey.findMany({ where: { id: { in: refusedKeyIds } } });
    expect(refused).toHaveLength(3);
    expect(refused.map((key) => key.lastUsedAt)).toEqual([null, null, null]);
  });
});

describe('GET /v1/me', () => {
  it('names the workspace of the key', async () => {
    const response = await call('/v1/me', `Bearer ${keys.valid}`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      id: growthWorkspace.id,
      name: 'Growth Co',
      plan: 'growth',
    });
  });
});

/**
 * The service's writes of lastUsedAt (on `app`) go through `write`, given the statement's values and
 * the function that runs it; its other statements run as they are.
 */
function interceptUseWrites(
  app: INestApplication,
  write: (values: unknown[], run: () => Promise<QueryResultRow[]>) => Promise<QueryResultRow[]>,
) {
  const database = app.get(Database);
  const query = database.query.bind(database);
  return jest
    .spyOn(database, 'query')
    .mockImplementation(async (sql, values) =>
      sql === API_KEY_RECORD_USES_SQL
        ? write(values, () => query(sql, values))
        : query(sql, values),
    );
}

describe('lastUsedAt', () => {
  // A write a test holds is let go after the test, passed or failed: held, it would keep the
  // following tests' writes (and the application's close) waiting.
  let releaseHeld = () => {};
  afterEach(() => {
    releaseHeld();
    releaseHeld = () => {};
  });

  it('is written on first use, not again within a minute, and again past a minute', async () => {
    const workspace = await createWorkspace(t.prisma);
    const { id, key } = await createApiKey(t.prisma, workspace.id);
    const lastUsedAt = async () =>
      (await t.prisma.apiKey.findUniqueOrThrow({ where: { id } })).lastUsedAt?.toISOString();
    const use = async () => expect((await call('/v1/me', `Bearer ${key}`)).status).toBe(200);

    expect(await lastUsedAt()).toBeUndefined();
    const first = new Date(t.clock.now()).toISOString();
    await use();
    await t.app.get(KeyUses).written();
    expect(await lastUsedAt()).toBe(first);

    t.clock.advance(30_000);
    const within = await databaseWorkOf(use);
    t.clock.advance(29_999);
    const stillWithin = await databaseWorkOf(use);
    expect(await lastUsedAt()).toBe(first);
    // Within the minute, a request does not even try to write.
    expect([...within.sql, ...stillWithin.sql].filter((sql) => /^\s*UPDATE/i.test(sql))).toEqual(
      [],
    );

    t.clock.advance(2);
    const second = new Date(t.clock.now()).toISOString();
    await use();
    await t.app.get(KeyUses).written();
    expect(await lastUsedAt()).toBe(second);
  });

  it('is written once by concurrent first uses', async () => {
    const workspace = await createWorkspace(t.prisma);
    const { id, key } = await createApiKey(t.prisma, workspace.id);
    const now = new Date(t.clock.now()).toISOString();
    let rowsWritten = 0;
    interceptUseWrites(t.app, async (_values, run) => {
      const rows = await run();
      rowsWritten += rows.length;
      return rows;
    });

    const responses = await Promise.all(
      Array.from({ length: 10 }, () => call('/v1/me', `Bearer ${key}`)),
    );

    expect(responses.map((response) => response.status)).toEqual(Array(10).fill(200));
    await t.app.get(KeyUses).written();
    expect(rowsWritten).toBe(1);
    const row = await t.prisma.apiKey.findUniqueOrThrow({ where: { id } });
    expect(row.lastUsedAt?.toISOString()).toBe(now);
  });

  it('is written after the answer: the request does not wait for it', async () => {
    const workspace = await createWorkspace(t.prisma);
    const { id, key } = await createApiKey(t.prisma, workspace.id);
    const now = new Date(t.clock.now()).toISOString();
    const released = new Promise<void>((resolve) => (releaseHeld = resolve));
    interceptUseWrites(t.app, async (_values, run) => {
      await released;
      return run();
    });

    // Answered while the write is held: awaited, it would never be.
    expect((await call('/v1/me', `Bearer ${key}`)).status).toBe(200);
    expect((await t.prisma.apiKey.findUniqueOrThrow({ where: { id } })).lastUsedAt).toBeNull();

    releaseHeld();
    await t.app.get(KeyUses).written();
    const row = await t.prisma.apiKey.findUniqueOrThrow({ where: { id } });
    expect(row.lastUsedAt?.toISOString()).toBe(now);
  });

  it('writes the uses of many keys in one statement, and one write at a time', async () => {
    const workspace = await createWorkspace(t.prisma);
    const made = await Promise.all(
      Array.from({ length: 6 }, () => createApiKey(t.prisma, workspace.id)),
    );
    const released = new Promise<void>((resolve) => (releaseHeld = resolve));
    const writes: string[][] = [];
    let underWay = 0;
    let mostUnderWay = 0;
    interceptUseWrites(t.app, async (values, run) => {
      writes.push([...(values[0] as string[])].sort());
      mostUnderWay = Math.max(mostUnderWay, ++underWay);
      try {
        if (writes.length === 1) await released;
        return await run();
      } finally {
        underWay--;
      }
    });

    // The first key's write is held; the five others are used meanwhile.
    expect((await call('/v1/me', `Bearer ${made[0].key}`)).status).toBe(200);
    const others = await Promise.all(
      made.slice(1).map(({ key }) => call('/v1/me', `Bearer ${key}`)),
    );
    expect(others.map((response) => response.status)).toEqual(Array(5).fill(200));
    releaseHeld();
    await t.app.get(KeyUses).written();

    expect(writes).toEqual([
      [made[0].id],
      made
        .slice(1)
        .map(({ id }) => id)
        .sort(),
    ]);
    expect(mostUnderWay).toBe(1);
    const rows = await t.prisma.apiKey.findMany({ where: { workspaceId: workspace.id } });
    expect(rows.map((row) => row.lastUsedAt?.toISOString())).toEqual(
      Array(6).fill(new Date(t.clock.now()).toISOString()),
    );
  });

  it('a write the database refuses: the answer is unaffected, and the next use writes it', async () => {
    const workspace = await createWorkspace(t.prisma);
    const { id, key } = await createApiKey(t.prisma, workspace.id);
    const spy = interceptUseWrites(t.app, () =>
      Promise.reject(new Error('the database is read-only')),
    );

    expect((await call('/v1/me', `Bearer ${key}`)).status).toBe(200);
    await t.app.get(KeyUses).written();
    expect((await t.prisma.apiKey.findUniqueOrThrow({ where: { id } })).lastUsedAt).toBeNull();

    spy.mockRestore();
    t.clock.advance(1_000);
    const now = new Date(t.clock.now()).toISOString();
    expect((await call('/v1/me', `Bearer ${key}`)).status).toBe(200);
    await t.app.get(KeyUses).written();
    const row = await t.prisma.apiKey.findUniqueOrThrow({ where: { id } });
    expect(row.lastUsedAt?.toISOString()).toBe(now);
  });

  it('skips a key whose row another transaction holds, rather than wait for it', async () => {
    const workspace = await createWorkspace(t.prisma);
    const held = await createApiKey(t.prisma, workspace.id);
    const free = await createApiKey(t.prisma, workspace.id);
    // Another instance's write, or the admin tool revoking the key, holding its row.
    const other = new Client({ connectionString: t.database.url });
    await other.connect();
    releaseHeld = () => void other.query('ROLLBACK').finally(() => other.end());
    await other.query('BEGIN');
    await other.query('SELECT id FROM api_keys WHERE id = $1 FOR UPDATE', [held.id]);
    const warnings = jest.spyOn(Logger.prototype, 'warn');

    for (const { key } of [held, free]) {
      expect((await call('/v1/me', `Bearer ${key}`)).status).toBe(200);
    }
    await t.app.get(KeyUses).written();

    const rows = await t.prisma.apiKey.findMany({ where: { workspaceId: workspace.id } });
    const lastUsed = new Map(rows.map((row) => [row.id, row.lastUsedAt?.toISOString()]));
    expect(lastUsed.get(held.id)).toBeUndefined();
    expect(lastUsed.get(free.id)).toBe(new Date(t.clock.now()).toISOString());
    // Skipped, not waited for until the statement's timeout and then refused.
    expect(warnings).not.toHaveBeenCalled();
  });

  it("is written before the application's database closes, when it shuts down", async () => {
    // A second instance of the service on the same database, closed as SIGTERM closes it.
    const other = await createTestApp({ database: t.database });
    const workspace = await createWorkspace(t.prisma);
    const { id, key } = await createApiKey(t.prisma, workspace.id);
    const now = new Date(other.clock.now()).toISOString();
    const database = other.app.get(Database);
    // The write starts only once the close has begun; the pools must close after it ends.
    let closing = () => {};
    const closeBegun = new Promise<void>((resolve) => (closing = resolve));
    let written = false;
    let writtenBeforePoolsClosed: boolean | undefined;
    interceptUseWrites(other.app, async (_values, run) => {
      await closeBegun;
      const rows = await run();
      written = true;
      return rows;
    });
    const closePools = database.onModuleDestroy.bind(database);
    jest.spyOn(database, 'onModuleDestroy').mockImplementation(() => {
      writtenBeforePoolsClosed = written;
      return closePools();
    });
    const response = await request(other.app.getHttpServer())
      .get('/v1/me')
      .set('Authorization', `Bearer ${key}`);
    expect(response.status).toBe(200);

    const closed = other.close();
    closing();
    await closed;

    expect(writtenBeforePoolsClosed).toBe(true);
    const row = await t.prisma.apiKey.findUniqueOrThrow({ where: { id } });
    expect(row.lastUsedAt?.toISOString()).toBe(now);
  });
});

describe('revoking, suspending, downgrading', () => {
  it('revoking a key refuses its next request, and only its own', async () => {
    const workspace = await createWorkspace(t.prisma);
    const first = await createApiKey(t.prisma, workspace.id, { name: 'CRM sync' });
    const second = await createApiKey(t.prisma, workspace.id, { name: 'BI export' });
    expect((await call('/v1/companies', `Bearer ${first.key}`)).status).toBe(200);

    await t.prisma.apiKey.update({ where: { id: first.id }, data: { revokedAt: new Date() } });

    for (const path of ENDPOINTS) {
      await expectTheUnauthorizedResponse(path, `Bearer ${first.key}`);
      expect((await call(path, `Bearer ${second.key}`)).status).toBe(200);
    }
  });

  it('a revocation written by the customer application is seen on the next request', async () => {
    const workspace = await createWorkspace(t.prisma);
    const { id, key } = await createApiKey(t.prisma, workspace.id);
    expect((await call('/v1/me', `Bearer ${key}`)).status).toBe(200);

    await t.prisma.apiKey.update({ where: { id }, data: { revokedAt: new Date(t.clock.now()) } });

    await expectTheUnauthorizedResponse('/v1/me', `Bearer ${key}`);
  });

  it.each([
    ['suspending the workspace', { suspended: true }],
    ['moving the workspace to starter', { plan: 'starter' as const }],
  ])('%s refuses its keys from the next request', async (_case, change) => {
    const workspace = await createWorkspace(t.prisma);
    const { key } = await createApiKey(t.prisma, workspace.id);
    expect((await call('/v1/leads', `Bearer ${key}`)).status).toBe(200);

    await t.prisma.workspace.update({ where: { id: workspace.id }, data: change });

    await expectTheUnauthorizedResponse('/v1/leads', `Bearer ${key}`);
  });
});

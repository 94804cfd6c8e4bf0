import fc from 'fast-check';
import request from 'supertest';
import { AsyncResource } from 'node:async_hooks';
import { Client } from 'pg';
import { createTestApp, type TestApp } from '../../support/app';
import {
  companyInsert,
  companyRow,
  createApiKey,
  createCompany,
  createContact,
  createLead,
} from '../../support/factories';
import { propertyOptions } from '../../support/fast-check';
import { lockWaiterCount } from '../../support/database';
import { createTenant, getWithKey } from '../../support/http';
import { until } from '../../support/until';

/*
 * ETags and If-None-Match (docs/api.md, "Conditional requests"): every 200 of a read has an ETag;
 * a request naming it gets a 304 without body, with the same ETag, request id and rate-limit
 * headers, not counted against the per-minute budget; the ETag changes whenever the body would,
 * whatever the order in which concurrent writers commit.
 */

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({ env: { RATE_LIMIT_PER_MINUTE: '1000000' } });
});

afterAll(async () => {
  await t.close();
});

const conditional = (path: string, key: string, etag: string) =>
  getWithKey(t.app, path, key).set('If-None-Match', etag);

/**
 * A feed page's cursor carries the cluster's snapshot horizon, which any transaction of the
 * cluster moves (another test file's, beside this one): the page, and so its ETag, may change
 * between two reads with nothing changed in the workspace. `check` returns 'moved' when an answer
 * was a 200 with another ETag than the one sent, which only a changed body may give; for a feed,
 * it runs again, up to ten times, and must once find the page still.
 */
async function whileStill(path: string, check: () => Promise<'moved' | 'checked'>): Promise<void> {
  const tries = path.includes('/changes') ? 10 : 1;
  for (let n = 0; n < tries; n++) if ((await check()) === 'checked') return;
  throw new Error(`${path}: its body moved under each of ${tries} tries`);
}

describe('every read', () => {
  let key: string;
  let paths: string[];

  beforeAll(async () => {
    const tenant = await createTenant(t.prisma);
    key = tenant.key;
    const company = await createCompany(t.prisma, tenant.workspace.id);
    await createContact(t.prisma, company);
    const lead = await createLead(t.prisma, company);
    paths = [
      '/v1/me',
      '/v1/companies',
      '/v1/companies?limit=1&intentLevel=warm',
      `/v1/companies/${company.id}`,
      '/v1/companies/changes',
      '/v1/leads',
      `/v1/leads/${lead.id}`,
      '/v1/leads/changes?limit=5',
      '/v1/openapi.json',
    ];
  });

  it("is answered without NestJS's interceptor chain: no AsyncResource.bind per request", async () => {
    // An interceptor puts each request through RxJS and binds two functions to its async scope,
    // whose closures (the request) Node's bind kept through young collections; the ETag is made
    // by a guard and the HTTP adapter instead (items/conditional-read.guard.ts).
    const bind = jest.spyOn(AsyncResource, 'bind');
    try {
      for (const path of paths) {
        await whileStill(path, async () => {
          const first = await getWithKey(t.app, path, key);
          expect([path, first.status]).toEqual([path, 200]);
          const again = await conditional(path, key, first.headers.etag);
          if (again.status === 200 && again.headers.etag !== first.headers.etag) return 'moved';
          expect([path, again.status]).toEqual([path, 304]);
          return 'checked';
        });
      }
      expect(bind).not.toHaveBeenCalled();
    } finally {
      bind.mockRestore();
    }
  });

  it('has an ETag on its 200, and answers 304 with no body to a request naming it', async () => {
    for (const path of paths) {
      await whileStill(path, () => namedAnswers304(path));
    }
  });

  async function namedAnswers304(path: string): Promise<'moved' | 'checked'> {
    const first = await getWithKey(t.app, path, key);
    expect([path, first.status]).toEqual([path, 200]);
    const etag = first.headers.etag;
    expect([path, etag]).toEqual([path, expect.stringMatching(/^W\/"[A-Za-z0-9_-]{27}"$/)]);

    for (const sent of [etag, etag.slice(2), `W/"other", ${etag}`, '*']) {
      const again = await conditional(path, key, sent).set('X-Request-Id', 'cond-1');
      if (again.status === 200 && again.headers.etag !== etag) return 'moved';
      expect([path, sent, again.status]).toEqual([path, sent, 304]);
      expect(again.text ?? '').toBe('');
      expect(again.headers.etag).toBe(etag);
      expect(again.headers['x-request-id']).toBe('cond-1');
      expect(again.headers['content-type']).toBeUndefined();
      if (path !== '/v1/openapi.json') {
        expect(again.headers['x-ratelimit-remaining']).toBeDefined();
        expect(again.headers.ratelimit).toContain('"per-minute"');
      }
    }
    const other = await conditional(path, key, 'W/"not-this-one"');
    if (other.headers.etag !== etag) return 'moved';
    expect([path, other.status, other.headers.etag]).toEqual([path, 200, etag]);
    return 'checked';
  }

  it('answers HEAD as its GET: the same ETag, and the 304 with the same headers, not counted', async () => {
    const head = (path: string, etag?: string) => {
      const sent = request(t.app.getHttpServer()).head(path).set('Authorization', `Bearer ${key}`);
      return etag ? sent.set('If-None-Match', etag) : sent;
    };
    const names = (headers: Record<string, string>) =>
      Object.keys(headers)
        .filter((name) => !['date', 'x-request-id'].includes(name))
        .sort();
    const moved = (answer: { status: number; headers: Record<string, string> }, etag: string) =>
      answer.status === 200 && answer.headers.etag !== etag;
    for (const path of paths) {
      await whileStill(path, async () => {
        const get = await getWithKey(t.app, path, key);
        const plain = await head(path);
        if (plain.headers.etag !== get.headers.etag) return 'moved';
        expect([path, plain.status, plain.headers.etag]).toEqual([path, 200, get.headers.etag]);

        const notModified = await conditional(path, key, get.headers.etag);
        const first = await head(path, get.headers.etag);
        const second = await head(path, get.headers.etag);
        if ([notModified, first, second].some((answer) => moved(answer, get.headers.etag))) {
          return 'moved';
        }
        for (const answer of [first, second]) {
          expect([path, answer.status, answer.headers.etag]).toEqual([path, 304, get.headers.etag]);
          expect([path, names(answer.headers)]).toEqual([path, names(notModified.headers)]);
        }
        if (path !== '/v1/openapi.json') {
          // Not counted: the budget left is the same after each of them.
          expect(second.headers['x-ratelimit-remaining']).toBe(
            first.headers['x-ratelimit-remaining'],
          );
        }
        return 'checked';
      });
    }
  });

  it("differs between workspaces and between queries, never another workspace's", async () => {
    const other = await createTenant(t.prisma);
    const mine = await getWithKey(t.app, '/v1/companies', key);
    const theirs = await getWithKey(t.app, '/v1/companies', other.key);
    expect(theirs.headers.etag).not.toBe(mine.headers.etag);
    expect((await conditional('/v1/companies', other.key, mine.headers.etag)).status).toBe(200);
    const page = await getWithKey(t.app, '/v1/companies?limit=1', key);
    expect(page.headers.etag).not.toBe(mine.headers.etag);
  });

  it('If-None-Match: * on an id of no item is the 404, not a 304', async () => {
    for (const path of ['/v1/companies/co_nobody', '/v1/leads/ld_nobody']) {
      expect((await conditional(path, key, '*')).status).toBe(404);
    }
  });

  it('a bad key is the 401 whatever its If-None-Match', async () => {
    const first = await getWithKey(t.app, '/v1/companies', key);
    const response = await conditional('/v1/companies', 'st_nope', first.headers.etag);
    expect(response.status).toBe(401);
  });
});

describe('what does not change the ETag', () => {
  it('folding the write log into its base count (one writer in 64 does it)', async () => {
    const tenant = await createTenant(t.prisma);
    await createCompany(t.prisma, tenant.workspace.id);
    await createCompany(t.prisma, tenant.workspace.id);
    const before = await getWithKey(t.app, '/v1/companies', tenant.key);
    // The fold takes the rows every snapshot sees: under other sessions' open transactions (the
    // suite's other files share the server), a row may wait for them, so it is folded again.
    await until(
      'the write log folded',
      async () => {
        await t.prisma.$executeRawUnsafe(`SELECT workspace_writes_fold('${tenant.workspace.id}')`);
        const [{ left }] = await t.prisma.$queryRaw<{ left: number }[]>`
          SELECT count(*)::int AS left FROM workspace_writes
          WHERE workspace_id = ${tenant.workspace.id}`;
        return left === 0;
      },
      { withinMs: 30_000 },
    );
    const after = await conditional('/v1/companies', tenant.key, before.headers.etag);
    expect(after.status).toBe(304);
  });
});

describe('what changes the ETag', () => {
  it('a write to the workspace: an item, its contacts, the company of a lead', async () => {
    const tenant = await createTenant(t.prisma);
    const company = await createCompany(t.prisma, tenant.workspace.id);
    const lead = await createLead(t.prisma, company);
    const etagOf = async (path: string) => (await getWithKey(t.app, path, tenant.key)).headers.etag;
    const paths = ['/v1/companies', `/v1/companies/${company.id}`, `/v1/leads/${lead.id}`];

    for (const write of [
      () => t.prisma.company.update({ where: { id: company.id }, data: { name: 'Renamed' } }),
      () => createContact(t.prisma, company),
      () => t.prisma.contact.deleteMany({ where: { companyId: company.id } }),
    ]) {
      const before = await Promise.all(paths.map(etagOf));
      await write();
      const after = await Promise.all(paths.map(etagOf));
      for (const [i, path] of paths.entries()) {
        expect([path, after[i]]).not.toEqual([path, before[i]]);
        expect((await conditional(path, tenant.key, before[i])).status).toBe(200);
      }
    }
  });
});

describe('the per-minute budget', () => {
  it('a 304 is not counted; the headers say what is left', async () => {
    const limited = await createTestApp({ env: { RATE_LIMIT_PER_MINUTE: '5' } });
    try {
      const tenant = await createTenant(limited.prisma);
      const get = (etag?: string) => {
        const request = getWithKey(limited.app, '/v1/companies', tenant.key);
        return etag ? request.set('If-None-Match', etag) : request;
      };
      const first = await get();
      expect(first.headers['x-ratelimit-remaining']).toBe('4');
      for (let i = 0; i < 10; i++) {
        const again = await get(first.headers.etag);
        expect(again.status).toBe(304);
        expect(again.headers['x-ratelimit-remaining']).toBe('4');
        expect(again.headers.ratelimit).toMatch(/"per-minute";r=4;t=\d+/);
      }
      // The budget itself was given back, not only the headers: four more 200s, then 429.
      for (const remaining of ['3', '2', '1', '0']) {
        expect((await get()).headers['x-ratelimit-remaining']).toBe(remaining);
      }
      expect((await get(first.headers.etag)).status).toBe(429);
    } finally {
      await limited.close();
    }
  });

  it('another key of the workspace is not refunded by this one’s 304s', async () => {
    const limited = await createTestApp({ env: { RATE_LIMIT_PER_MINUTE: '3' } });
    try {
      const tenant = await createTenant(limited.prisma);
      const other = await createApiKey(limited.prisma, tenant.workspace.id);
      const first = await getWithKey(limited.app, '/v1/me', tenant.key);
      await getWithKey(limited.app, '/v1/me', other.key);
      const again = await getWithKey(limited.app, '/v1/me', other.key).set(
        'If-None-Match',
        first.headers.etag,
      );
      expect(again.status).toBe(304);
      expect(again.headers['x-ratelimit-remaining']).toBe('2');
      expect(
        (await getWithKey(limited.app, '/v1/me', tenant.key)).headers['x-ratelimit-remaining'],
      ).toBe('1');
    } finally {
      await limited.close();
    }
  });
});

/*
 * Writers that commit late. A writer transaction opens, writes (a new score, a new company, a
 * deletion) and stays open while reads go on; it commits or rolls back later. Other writes are
 * sent meanwhile, on other rows: each either commits at once (a later transaction committing
 * before the open one: the late committer's case) or waits on the open writer's locks until it
 * ends. At every read the conditional answer is checked against the truth: a 304 only when the
 * body is the one the sent ETag was given with, and one ETag never stands for two bodies.
 */
describe('a writer that commits after a later writer', () => {
  it('still changes the ETag: the one seen before it committed is not answered 304', async () => {
    const tenant = await createTenant(t.prisma);
    const ws = tenant.workspace.id;
    const early = await createCompany(t.prisma, ws, { intentScore: 10 });
    const late = new Client({ connectionString: t.database.directUrl });
    const other = new Client({ connectionString: t.database.directUrl });
    const observer = new Client({ connectionString: t.database.directUrl });
    await Promise.all([late.connect(), other.connect(), observer.connect()]);
    try {
      // The late writer takes its transaction id first, and commits last.
      await late.query('BEGIN');
      await late.query('UPDATE companies SET intent_score = 90 WHERE id = $1', [early.id]);
      // A later transaction writes another company: it commits at once, or waits on the late one.
      let committed = false;
      const second = other
        .query(
          ...companyInsert(companyRow(ws, { id: `${ws}-later`, name: 'Later', intentScore: 30 })),
        )
        .then(() => {
          committed = true;
        });
      await until(
        'the later writer to commit or to wait on the late one',
        async () => committed || (await lockWaiterCount(observer)) > 0,
        { everyMs: 5 },
      );
      const seen = await getWithKey(t.app, '/v1/companies', tenant.key);
      await late.query('COMMIT');
      await second;
      const after = await conditional('/v1/companies', tenant.key, seen.headers.etag);
      expect(after.status).toBe(200);
      expect(after.text).not.toBe(seen.text);
      expect(after.headers.etag).not.toBe(seen.headers.etag);
    } finally {
      await Promise.all([late.end(), other.end(), observer.end()]);
    }
  });
});

describe('under late-committing writers (property)', () => {
  type Step =
    | { kind: 'open'; op: 'score' | 'insert' | 'delete'; n: number }
    | { kind: 'end'; commit: boolean }
    | { kind: 'write'; op: 'score' | 'insert' | 'delete'; n: number }
    | { kind: 'read'; path: 0 | 1 | 2 };

  const op = fc.constantFrom('score' as const, 'insert' as const, 'delete' as const);
  const step: fc.Arbitrary<Step> = fc.oneof(
    fc.record({ kind: fc.constant('open' as const), op, n: fc.nat(9) }),
    fc.record({ kind: fc.constant('end' as const), commit: fc.boolean() }),
    fc.record({ kind: fc.constant('write' as const), op, n: fc.nat(9) }),
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant('read' as const),
        path: fc.constantFrom(0 as const, 1 as const, 2 as const),
      }),
    },
  );

  it('never answers 304 when the body changed, and one ETag is one body', async () => {
    const writer = new Client({ connectionString: t.database.directUrl });
    const autocommit = new Client({ connectionString: t.database.directUrl });
    const observer = new Client({ connectionString: t.database.directUrl });
    await Promise.all([writer.connect(), autocommit.connect(), observer.connect()]);

    /** Resolves when the statement ends or is seen waiting on a lock: which one, and the wait. */
    async function sendAutocommit(statement: [string, unknown[]]) {
      let ended = false;
      const done = autocommit.query(...statement).then(() => {
        ended = true;
      });
      return until(
        'the statement to end or to wait on a lock',
        async () => {
          if (ended) return { waiting: undefined };
          if ((await lockWaiterCount(observer)) > 0) return { waiting: done };
          return undefined;
        },
        { everyMs: 5 },
      );
    }
    let runs = 0;
    try {
      await fc.assert(
        fc.asyncProperty(fc.array(step, { minLength: 5, maxLength: 25 }), async (steps) => {
          runs++;
          const tenant = await createTenant(t.prisma);
          const ws = tenant.workspace.id;
          const ids = Array.from({ length: 10 }, (_, i) => `${ws}-c${i}`);
          for (const id of ids.slice(0, 5)) {
            await createCompany(t.prisma, ws, { id, intentScore: 50 });
          }
          const paths = ['/v1/companies', `/v1/companies/${ids[0]}`, '/v1/companies?limit=3'];
          const bodies = new Map<string, string>(); // ETag -> body
          const lastEtag: (string | undefined)[] = [];
          let open = false;
          // Writes waiting for the open writer to end: they commit right after it.
          let waiting: Promise<void>[] = [];

          // Scores and deletions of the five companies there at first, insertions of five more.
          const sql = (kind: 'score' | 'insert' | 'delete', n: number): [string, unknown[]] => {
            const id = kind === 'insert' ? ids[5 + (n % 5)] : ids[n % 5];
            if (kind === 'score') {
              return ['UPDATE companies SET intent_score = $2 WHERE id = $1', [id, (n * 7) % 100]];
            }
            if (kind === 'delete') return ['DELETE FROM companies WHERE id = $1', [id]];
            return companyInsert(
              companyRow(ws, { id, name: 'New', intentScore: n * 9 }),
              'ON CONFLICT (id) DO NOTHING',
            );
          };

          for (const s of steps) {
            if (s.kind === 'open' && !open) {
              await writer.query('BEGIN');
              await writer.query(...sql(s.op, s.n));
              open = true;
            } else if (s.kind === 'end' && open) {
              await writer.query(s.commit ? 'COMMIT' : 'ROLLBACK');
              await Promise.all(waiting);
              waiting = [];
              open = false;
            } else if (s.kind === 'write' && waiting.length === 0) {
              // One waiting write at most: the next would queue behind it on the same client.
              const sent = await sendAutocommit(sql(s.op, s.n));
              if (sent.waiting) waiting.push(sent.waiting);
            } else if (s.kind === 'read') {
              const path = paths[s.path];
              const truth = await getWithKey(t.app, path, tenant.key);
              const etag = truth.headers.etag as string | undefined;
              if (truth.status === 200 && etag) {
                const known = bodies.get(etag);
                if (known !== undefined) expect(truth.text).toBe(known);
                bodies.set(etag, truth.text);
              }
              const sent = lastEtag[s.path];
              if (sent !== undefined) {
                const answer = await conditional(path, tenant.key, sent);
                if (answer.status === 304) {
                  expect(truth.status).toBe(200);
                  expect(truth.text).toBe(bodies.get(sent));
                } else {
                  // The same answer as the truth's (a 404's envelope differs by its timestamp).
                  expect(answer.status).toBe(truth.status);
                  if (truth.status === 200) expect(answer.text).toBe(truth.text);
                }
              }
              if (etag) lastEtag[s.path] = etag;
            }
          }
          if (open) await writer.query('ROLLBACK');
          await Promise.all(waiting);
        }),
        propertyOptions(40),
      );
    } finally {
      await Promise.all([writer.end(), autocommit.end(), observer.end()]);
    }
    expect(runs).toBeGreaterThan(0);
  }, 300_000);
});

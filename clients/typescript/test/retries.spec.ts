import {
  BadRequestError,
  Client,
  CursorExpiredError,
  InternalServerError,
  NetworkError,
  NotFoundError,
  RateLimitError,
  ServiceUnavailableError,
  parseRateLimits,
  type ClientOptions,
} from '../src';

/*
 * The client's retry rules against scripted responses (what a real server cannot be made to do
 * on demand: a 503 twice, a dropped connection). Nothing sleeps: `sleep` only records.
 */
const WORKSPACE = { id: 'ws_1', name: 'Acme', plan: 'growth' };

function envelope(status: number, error: string, message: string | string[]) {
  return {
    statusCode: status,
    message,
    error,
    path: '/v1/me',
    timestamp: '2026-03-01T09:00:00.000Z',
  };
}

function reply(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json', 'X-Request-Id': `req-${status}`, ...headers },
  });
}

/** A client whose fetch plays `script` in order (a function throws, as fetch does offline). */
function scripted(script: (Response | (() => never))[], options: Partial<ClientOptions> = {}) {
  const sleeps: number[] = [];
  const urls: string[] = [];
  let clock = 0;
  const client = new Client({
    apiKey: 'st_test',
    baseUrl: 'http://api.test/',
    fetch: (input) => {
      urls.push(input as string); // the client always passes a string
      const next = script.shift();
      if (!next) throw new Error('the script is over');
      return Promise.resolve(typeof next === 'function' ? next() : next);
    },
    sleep: (ms) => {
      sleeps.push(ms);
      clock += ms;
      return Promise.resolve();
    },
    now: () => clock,
    random: () => 0.5,
    ...options,
  });
  return { client, sleeps, urls };
}

const offline = (): never => {
  throw new TypeError('fetch failed');
};
const unavailable = () =>
  reply(503, envelope(503, 'SERVICE_UNAVAILABLE', 'Service temporarily unavailable'));

describe('Client retries', () => {
  it('retries a 503 with growing, jittered, bounded waits, then returns the answer', async () => {
    const { client, sleeps, urls } = scripted(
      [unavailable(), unavailable(), reply(200, WORKSPACE)],
      {
        random: (() => {
          const draws = [0.9, 0.1];
          return () => draws.shift() ?? 0;
        })(),
      },
    );

    await expect(client.me()).resolves.toEqual(WORKSPACE);

    expect(urls).toEqual([
      'http://api.test/v1/me',
      'http://api.test/v1/me',
      'http://api.test/v1/me',
    ]);
    // Equal jitter on 500 ms then 1000 ms steps: half fixed, half drawn.
    expect(sleeps).toEqual([250 + 0.9 * 250, 500 + 0.1 * 500]);
    expect(sleeps[1]).toBeGreaterThan(sleeps[0]);
  });

  it("waits at least a 503's Retry-After, and the backoff when it is longer", async () => {
    const shed = (seconds: string) =>
      reply(503, envelope(503, 'SERVICE_UNAVAILABLE', 'Service temporarily unavailable'), {
        'Retry-After': seconds,
      });
    const { client, sleeps } = scripted(
      [shed('5'), shed('1'), shed('1'), shed('1'), shed('3600'), reply(200, WORKSPACE)],
      { maxRetries: 5 },
    );

    await expect(client.me()).resolves.toEqual(WORKSPACE);

    // Retry-After 5 s over a 375 ms backoff; then backoffs of 750 ms (Retry-After 1 s is longer),
    // 1500 and 3000 ms; a Retry-After of an hour is capped at backoffMaxMs (30 s).
    expect(sleeps).toEqual([5000, 1000, 1500, 3000, 30_000]);
  });

  it('gives up on a 503 after maxRetries with a typed error carrying the envelope', async () => {
    const { client, sleeps, urls } = scripted(
      [unavailable(), unavailable(), unavailable(), unavailable()],
      { maxRetries: 3, backoffBaseMs: 1000, backoffMaxMs: 3000 },
    );

    const error = await client.me().catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(ServiceUnavailableError);
    expect(error).toMatchObject({
      status: 503,
      attempts: 4,
      requestId: 'req-503',
      envelope: envelope(503, 'SERVICE_UNAVAILABLE', 'Service temporarily unavailable'),
    });
    expect(urls).toHaveLength(4);
    // Steps 1000, 2000, then capped at 3000.
    expect(sleeps).toEqual([750, 1500, 2250]);
  });

  it('retries a request that got no response, then gives up with a NetworkError', async () => {
    const recovered = scripted([offline, offline, reply(200, WORKSPACE)]);
    await expect(recovered.client.me()).resolves.toEqual(WORKSPACE);
    expect(recovered.sleeps).toEqual([375, 750]);

    const down = scripted([offline, offline, offline], { maxRetries: 2 });
    const error = await down.client.me().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(NetworkError);
    expect(error).toMatchObject({ attempts: 3, cause: new TypeError('fetch failed') });
    expect(down.urls).toHaveLength(3);
    expect(down.sleeps).toEqual([375, 750]);
  });

  it('never retries a 400 or a 500', async () => {
    const bad = scripted([
      reply(400, envelope(400, 'BAD_REQUEST', ['limit must not be greater than 200'])),
    ]);
    await expect(bad.client.me()).rejects.toBeInstanceOf(BadRequestError);
    expect(bad.urls).toHaveLength(1);
    expect(bad.sleeps).toEqual([]);

    const broken = scripted([
      reply(500, envelope(500, 'INTERNAL_SERVER_ERROR', 'Internal server error')),
    ]);
    await expect(broken.client.me()).rejects.toBeInstanceOf(InternalServerError);
    expect(broken.urls).toHaveLength(1);
    expect(broken.sleeps).toEqual([]);
  });

  it('waits Retry-After on a 429, up to maxRateLimitRetries, then throws RateLimitError', async () => {
    const tooMany = () =>
      reply(429, envelope(429, 'TOO_MANY_REQUESTS', 'Too Many Requests'), {
        'Retry-After': '7',
        'X-RateLimit-Remaining': '0',
        'X-RateLimit-Reset': '7',
      });
    const honoured = scripted([tooMany(), reply(200, WORKSPACE)]);
    await expect(honoured.client.me()).resolves.toEqual(WORKSPACE);
    expect(honoured.sleeps).toEqual([7000]);

    const refused = scripted([tooMany(), tooMany(), tooMany()], { maxRateLimitRetries: 2 });
    const error = await refused.client.me().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error).toMatchObject({ status: 429, attempts: 3 });
    expect(refused.sleeps).toEqual([7000, 7000]);
  });

  it('waits for the reset before the next request once X-RateLimit-Remaining is 0', async () => {
    const spent = { 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': '42' };
    const { client, sleeps, urls } = scripted([
      reply(200, WORKSPACE, { 'X-RateLimit-Remaining': '1', 'X-RateLimit-Reset': '50' }),
      reply(200, WORKSPACE, spent),
      reply(200, WORKSPACE, { 'X-RateLimit-Remaining': '9', 'X-RateLimit-Reset': '60' }),
    ]);

    await client.me();
    await client.me();
    expect(sleeps).toEqual([]);
    await client.me();

    expect(sleeps).toEqual([42_000]);
    expect(urls).toHaveLength(3);
  });

  it("reads the IETF draft's RateLimit fields, and waits for the per-minute reset they state", async () => {
    const policy = '"in-flight";q=20;qu="concurrent-requests", "per-minute";q=120;w=60';
    const { client, sleeps } = scripted([
      // No X-RateLimit-* here: the IETF fields alone say the budget is spent.
      reply(200, WORKSPACE, {
        'RateLimit-Policy': policy,
        RateLimit: '"in-flight";r=19, "per-minute";r=0;t=42',
      }),
      reply(200, WORKSPACE, {
        'RateLimit-Policy': policy,
        RateLimit: '"in-flight";r=19, "per-minute";r=119;t=60',
      }),
    ]);

    await client.me();
    expect(client.rateLimits).toEqual({
      policies: [
        { name: 'in-flight', quota: 20, unit: 'concurrent-requests' },
        { name: 'per-minute', quota: 120, windowSeconds: 60, unit: 'requests' },
      ],
      states: [
        { name: 'in-flight', remaining: 19 },
        { name: 'per-minute', remaining: 0, resetSeconds: 42 },
      ],
    });
    await client.me();

    expect(sleeps).toEqual([42_000]);
    expect(client.rateLimits.states[1]).toEqual({
      name: 'per-minute',
      remaining: 119,
      resetSeconds: 60,
    });
  });
});

describe('parseRateLimits', () => {
  const parse = (fields: Record<string, string>) => parseRateLimits(new Headers(fields));

  it('reads members split over field lines, spaces and unknown parameters as the draft allows', () => {
    const headers = new Headers();
    headers.append('RateLimit-Policy', '"per-minute";q=120;w=60');
    headers.append('RateLimit-Policy', '"in-flight" ; q=20 ; qu="concurrent-requests";pk=:YWJj:');
    headers.append('RateLimit', '"per-minute";r=5;t=7,"in-flight";r=3');
    expect(parseRateLimits(headers)).toEqual({
      policies: [
        { name: 'per-minute', quota: 120, windowSeconds: 60, unit: 'requests' },
        { name: 'in-flight', quota: 20, unit: 'concurrent-requests' },
      ],
      states: [
        { name: 'per-minute', remaining: 5, resetSeconds: 7 },
        { name: 'in-flight', remaining: 3 },
      ],
    });
  });

  it('skips what it cannot read rather than guess, and is empty without the fields', () => {
    expect(parse({})).toEqual({ policies: [], states: [] });
    expect(parse({ RateLimit: '"a";r=-1, "b";t=4, "c";r=2' }).states).toEqual([
      { name: 'c', remaining: 2 },
    ]);
    expect(parse({ 'RateLimit-Policy': 'limit=100, remaining=50' }).policies).toEqual([]);
  });
});

describe('Client iterators', () => {
  const page = (total: number, offset: number, size: number) =>
    reply(200, {
      total,
      limit: 200,
      offset,
      data: Array.from({ length: size }, (_, i) => ({ id: `ld_${offset + i}` })),
    });

  it('stop after a full last page when offset reaches total, without an empty request', async () => {
    const { client, urls } = scripted([page(400, 0, 200), page(400, 200, 200)]);
    const ids: string[] = [];
    for await (const lead of client.leads({ since: '2026-03-01' })) ids.push(lead.id);
    expect(ids).toHaveLength(400);
    expect(urls).toEqual([
      'http://api.test/v1/leads?limit=200&offset=0&since=2026-03-01',
      'http://api.test/v1/leads?limit=200&offset=200&since=2026-03-01',
    ]);
  });

  it('stop at a short page', async () => {
    const { client, urls } = scripted([page(999, 0, 200), page(999, 200, 3)]);
    const ids: string[] = [];
    for await (const company of client.companies()) ids.push(company.id);
    expect(ids).toHaveLength(203);
    expect(urls).toHaveLength(2);
  });
});

describe('Client single items', () => {
  it('send the id as one escaped path segment', async () => {
    const { client, urls } = scripted([reply(200, { id: 'co_a/b?c d#e' }), reply(200, {})]);
    await client.getCompany('co_a/b?c d#e');
    await client.getLead('ld_%41');
    expect(urls).toEqual([
      'http://api.test/v1/companies/co_a%2Fb%3Fc%20d%23e',
      'http://api.test/v1/leads/ld_%2541',
    ]);
  });

  it('refuse an id that cannot be a path segment, without a request', async () => {
    const { client, urls } = scripted([]);
    for (const id of ['', '.', '..']) {
      await expect(client.getCompany(id)).rejects.toBeInstanceOf(RangeError);
    }
    expect(urls).toEqual([]);
  });

  it('a 404 is a NotFoundError (an ApiError with status 404), not retried', async () => {
    const { client, urls, sleeps } = scripted([
      reply(404, envelope(404, 'NOT_FOUND', 'Not Found')),
    ]);
    const error = await client.getLead('ld_1').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error).toMatchObject({ status: 404, attempts: 1, envelope: { error: 'NOT_FOUND' } });
    expect(urls).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });
});

describe('Client change feeds', () => {
  const upsert = (id: string) => ({
    op: 'upsert',
    id,
    changedAt: '2026-03-01T09:00:00.000Z',
    company: { id },
  });
  const deletion = (id: string) => ({ op: 'delete', id, changedAt: '2026-03-01T09:00:00.000Z' });
  const feedPage = (data: unknown[], nextCursor: string, hasMore: boolean) =>
    reply(200, { data, nextCursor, hasMore });
  const drain = async <P>(pages: AsyncIterable<P>): Promise<P[]> => {
    const seen: P[] = [];
    for await (const page of pages) seen.push(page);
    return seen;
  };

  it('follow nextCursor page after page, and stop at the first page without more', async () => {
    const { client, urls, sleeps } = scripted([
      feedPage([upsert('co_1'), upsert('co_2')], 'c2', true),
      feedPage([deletion('co_1')], 'c3', false),
    ]);

    const pages = await drain(client.companyChanges({ limit: 2 }));

    expect(pages).toEqual([
      { data: [upsert('co_1'), upsert('co_2')], nextCursor: 'c2', hasMore: true },
      { data: [deletion('co_1')], nextCursor: 'c3', hasMore: false },
    ]);
    expect(urls).toEqual([
      'http://api.test/v1/companies/changes?limit=2',
      'http://api.test/v1/companies/changes?limit=2&cursor=c2',
    ]);
    expect(sleeps).toEqual([]);
  });

  it('yield the last page even when it is empty: its cursor is the one to store', async () => {
    const { client, urls } = scripted([feedPage([], 'c1', false)]);
    const pages = await drain(client.leadChanges({ cursor: 'c1' }));
    expect(pages).toEqual([{ data: [], nextCursor: 'c1', hasMore: false }]);
    expect(urls).toEqual(['http://api.test/v1/leads/changes?limit=1000&cursor=c1']);
  });

  it('wait with growing backoff while changes are held back (empty page, hasMore), then go on', async () => {
    const { client, urls, sleeps } = scripted([
      feedPage([upsert('co_1')], 'c1', true),
      feedPage([], 'c1', true),
      feedPage([], 'c1', true),
      feedPage([], 'c1', true),
      feedPage([upsert('co_2')], 'c2', true),
      feedPage([], 'c2', true),
      feedPage([upsert('co_3')], 'c3', false),
    ]);

    const pages = await drain(client.companyChanges({ cursor: 'c0' }));

    // The held-back pages are not yielded: each was followed by a wait, never asked again at once.
    expect(pages.map((page) => page.data.map((change) => change.id))).toEqual([
      ['co_1'],
      ['co_2'],
      ['co_3'],
    ]);
    expect(urls.map((url) => new URL(url).searchParams.get('cursor'))).toEqual([
      'c0',
      'c1',
      'c1',
      'c1',
      'c1',
      'c2',
      'c2',
    ]);
    // Equal jitter on 500, 1000, 2000 ms; the count starts again after a page with changes.
    expect(sleeps).toEqual([375, 750, 1500, 375]);
  });

  it('after maxWaits waits, yield the held-back empty page and end (not caught up)', async () => {
    const { client, urls, sleeps } = scripted([
      feedPage([upsert('co_1')], 'c1', true),
      feedPage([], 'c1', true),
      feedPage([], 'c1', true),
      feedPage([], 'c1', true),
    ]);

    const pages = await drain(client.companyChanges({ maxWaits: 2 }));

    expect(pages).toEqual([
      { data: [upsert('co_1')], nextCursor: 'c1', hasMore: true },
      { data: [], nextCursor: 'c1', hasMore: true },
    ]);
    expect(urls).toHaveLength(4);
    expect(sleeps).toEqual([375, 750]);
  });

  it('a 410 is a CursorExpiredError, not retried; a 400 for a bad cursor is a BadRequestError', async () => {
    const gone = scripted([
      reply(410, envelope(410, 'GONE', 'cursor has expired: start again without a cursor')),
    ]);
    const error = await drain(gone.client.leadChanges({ cursor: 'old' })).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(CursorExpiredError);
    expect(error).toMatchObject({ status: 410, attempts: 1, envelope: { error: 'GONE' } });
    expect(gone.urls).toHaveLength(1);

    const bad = scripted([reply(400, envelope(400, 'BAD_REQUEST', ['cursor is not valid']))]);
    await expect(bad.client.listCompanyChanges({ cursor: 'x' })).rejects.toMatchObject({
      name: 'BadRequestError',
      envelope: { message: ['cursor is not valid'] },
    });
  });
});

import type { Server } from 'node:http';
import { Agent, request } from 'node:http';
import { Client } from 'pg';
import { KeyLookups } from '../../../src/auth/key-lookups';
import { KeyedRoutes } from '../../../src/auth/keyed-routes';
import { Database } from '../../../src/database/database';
import { LOG_DESTINATION } from '../../../src/logging/logging.module';
import { InFlightLimiter } from '../../../src/rate-limit/in-flight-limiter';
import { createTestApp, type TestApp } from '../../support/app';
import { waitForLockWaiter } from '../../support/database';
import { createApiKey, insertCompanies } from '../../support/factories';
import { createTenant, ISO_UTC_MILLIS } from '../../support/http';
import { listenOnLoopback, send, type RawResponse } from '../../support/raw-http';
import { until } from '../../support/until';

/*
 * Fair share under load (docs/api.md, "In-flight limit"; docs/scaling.md): one workspace bursts far
 * beyond its in-flight limit through several keys while another reads one page at a time. The
 * quiet one is never refused and never waits behind the noisy one's backlog; the noisy one gets
 * only 200 and 429 (each 429 with `Retry-After`), nothing else.
 *
 * What is asserted is behaviour, never a duration: the statuses, and the order in which the fair
 * queue gave connections out. Every statement of a workspace goes through Database.fairQueue.run;
 * the test records when each one asked for a connection and when it got one, and counts, for each
 * statement of the quiet workspace that had to wait, how many of the noisy workspace's statements
 * got a connection meanwhile. With fair queuing it is none: the quiet workspace, served least, gets
 * the next free connection, and with the noisy workspace held to its share of the connections (3 of
 * 10) there is usually one free. With one FIFO queue it is the noisy backlog ahead of it.
 */
const WAVES = 3;
const WAVE_SIZE = 150;
const NOISY_KEYS = 5;
const LIMIT = 20;
const NOISY_STATEMENT_MS = 30;

let t: TestApp;
let port: number;
let noisyKeys: string[];
let quietKey: string;
let noisyWorkspace: string;
/** Every line the application writes. */
const logLines: string[] = [];
const agent = new Agent({ keepAlive: true, maxSockets: WAVE_SIZE + 10 });

beforeAll(async () => {
  t = await createTestApp({
    env: {
      // Only the in-flight limit may refuse here: the per-minute budget is out of the way.
      RATE_LIMIT_PER_MINUTE: '1000000',
      MAX_IN_FLIGHT_PER_WORKSPACE: String(LIMIT),
      LOG_LEVEL: 'info',
    },
    customize: (builder) => {
      builder
        .overrideProvider(LOG_DESTINATION)
        .useValue({ write: (line: string) => void logLines.push(line) });
    },
  });
  port = await listenOnLoopback(t.app);
  const noisy = await createTenant(t.prisma);
  noisyWorkspace = noisy.workspace.id;
  noisyKeys = [noisy.key];
  for (let i = 1; i < NOISY_KEYS; i++) {
    noisyKeys.push((await createApiKey(t.prisma, noisy.workspace.id)).key);
  }
  await insertCompanies(t.prisma, noisy.workspace.id, 400);
  const quiet = await createTenant(t.prisma);
  quietKey = quiet.key;
  await insertCompanies(t.prisma, quiet.workspace.id, 100);
}, 60_000);

afterAll(async () => {
  agent.destroy();
  await t?.close();
});

const get = (path: string, key: string) =>
  send(port, path, { agent, headers: { Authorization: `Bearer ${key}` } });

/** What the fair queue did, in order: a statement asking for a connection, then getting one. */
interface QueueEvent {
  workspace: string;
  statement: number;
  kind: 'asked' | 'got';
}

it('uses the contract default of 20 requests in progress per workspace', () => {
  const defaults = new InFlightLimiter({ MAX_IN_FLIGHT_PER_WORKSPACE: 20 } as never);
  expect(defaults.limit).toBe(20);
  expect(t.app.get(InFlightLimiter).limit).toBe(LIMIT);
});

it("never refuses nor queues the quiet workspace behind the noisy one's burst", async () => {
  const database = t.app.get(Database);
  const run = database.fairQueue.run.bind(database.fairQueue);
  const events: QueueEvent[] = [];
  let statements = 0;
  let noisyInQueue = 0;
  let mostNoisyInQueue = 0;
  let mostWaiting = 0;
  jest.spyOn(database.fairQueue, 'run').mockImplementation((workspace, task) => {
    const statement = ++statements;
    const noisy = workspace === noisyWorkspace;
    if (noisy) mostNoisyInQueue = Math.max(mostNoisyInQueue, ++noisyInQueue);
    events.push({ workspace, statement, kind: 'asked' });
    mostWaiting = Math.max(mostWaiting, database.fairQueue.waiting);
    return run(workspace, async () => {
      events.push({ workspace, statement, kind: 'got' });
      // The noisy workspace's statements hold their connection a while, as pages of a large
      // workspace do under load: while it bursts, it has a backlog waiting for connections all
      // along (on a fast machine it would not).
      if (noisy) await new Promise((resolve) => setTimeout(resolve, NOISY_STATEMENT_MS));
      return task();
    }).finally(() => {
      if (noisy) noisyInQueue--;
    });
  });

  const noisyResponses: RawResponse[] = [];
  const quietResponses: RawResponse[] = [];
  let bursting = true;
  const quietReader = (async () => {
    while (bursting || quietResponses.length < 5) {
      quietResponses.push(await get('/v1/companies?limit=50', quietKey));
    }
  })();
  for (let wave = 0; wave < WAVES; wave++) {
    const burst = Array.from({ length: WAVE_SIZE }, (_, i) =>
      get('/v1/companies?limit=200', noisyKeys[i % NOISY_KEYS]),
    );
    noisyResponses.push(...(await Promise.all(burst)));
  }
  bursting = false;
  await quietReader;
  jest.restoreAllMocks();

  // The quiet workspace: every read served.
  expect(quietResponses.map((response) => response.status)).toEqual(quietResponses.map(() => 200));
  // The noisy one: 200 or 429, nothing else; each 429 the in-flight limit's, with Retry-After.
  const statuses = new Set(noisyResponses.map((response) => response.status));
  expect([...statuses].sort()).toEqual([200, 429]);
  for (const response of noisyResponses.filter(({ status }) => status === 429)) {
    expect(response.headers['retry-after']).toBe('1');
    // In the IETF draft's fields: the in-flight limit, nothing left of it; no per-minute member.
    expect([response.headers['ratelimit-policy'], response.headers['ratelimit']]).toEqual([
      `"in-flight";q=${LIMIT};qu="concurrent-requests"`,
      '"in-flight";r=0',
    ]);
    expect(JSON.parse(response.text)).toStrictEqual({
      statusCode: 429,
      message: `Too many requests in progress for this workspace: at most ${LIMIT} at a time`,
      error: 'TOO_MANY_REQUESTS',
      path: '/v1/companies?limit=200',
      timestamp: expect.stringMatching(ISO_UTC_MILLIS),
    });
  }
  // Never more of its statements at the database's door than its limit.
  expect(mostNoisyInQueue).toBeLessThanOrEqual(LIMIT);

  // Each statement of the quiet workspace that waited got the next connection given out.
  const overtaken: number[] = [];
  for (const asked of events.filter((e) => e.workspace !== noisyWorkspace && e.kind === 'asked')) {
    const from = events.indexOf(asked);
    const got = events.findIndex((e, i) => i > from && e.statement === asked.statement);
    const between = events.slice(from + 1, got);
    overtaken.push(
      between.filter((e) => e.workspace === noisyWorkspace && e.kind === 'got').length,
    );
  }
  expect(overtaken.length).toBeGreaterThanOrEqual(quietResponses.length);
  // The burst had a backlog waiting in the queue all along, and no quiet statement was overtaken
  // by it (with the workspace's share of the connections, most never even waited).
  expect(mostWaiting).toBeGreaterThan(0);
  expect(Math.max(...overtaken)).toBe(0);
}, 120_000);

it('frees the in-flight count of every request once it is over', async () => {
  const limiter = t.app.get(InFlightLimiter);
  expect(limiter.requestsInFlight).toBe(0);
  expect((await get('/v1/companies?limit=1', noisyKeys[0])).status).toBe(200);
  expect(limiter.requestsInFlight).toBe(0);
});

it('frees the in-flight count of a request whose client left while its key was being checked', async () => {
  const limiter = t.app.get(InFlightLimiter);
  const server = t.app.getHttpServer() as Server;
  const connections = () =>
    new Promise<number>((resolve) => server.getConnections((_, count) => resolve(count)));
  let admitted = 0;
  const tryAcquire = limiter.tryAcquire.bind(limiter);
  const spy = jest.spyOn(limiter, 'tryAcquire').mockImplementation((workspaceId) => {
    admitted++;
    return tryAcquire(workspaceId);
  });
  // A key never seen: its check is a statement, held here on a lock of the keys' table.
  const { key } = await createApiKey(t.prisma, noisyWorkspace);
  const locker = new Client({ connectionString: t.database.url });
  await locker.connect();
  try {
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE api_keys IN ACCESS EXCLUSIVE MODE');
    const before = await connections();
    const leaving = request({
      host: '127.0.0.1',
      port,
      path: '/v1/companies?limit=1',
      headers: { Authorization: `Bearer ${key}` },
    });
    leaving.on('error', () => undefined);
    leaving.end();
    await waitForLockWaiter(locker);
    leaving.destroy();
    // The server has seen the client go before the key check ends.
    await until('the server to see the client go', async () => (await connections()) <= before, {
      everyMs: 10,
    });
    await locker.query('ROLLBACK');
    await until('the key check to end and the in-flight limit to be asked', () => admitted > 0, {
      everyMs: 10,
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(limiter.requestsInFlight).toBe(0);
  } finally {
    spy.mockRestore();
    await locker.end();
  }
});

it("refuses a burst's requests without the key's database check, and never admits one that way", async () => {
  const { workspace, key } = await createTenant(t.prisma);
  const database = t.app.get(Database);
  const keyLookups = t.app.get(KeyLookups);
  const run = database.fairQueue.run.bind(database.fairQueue);
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  jest
    .spyOn(database.fairQueue, 'run')
    .mockImplementation(async (flow, task) =>
      run(flow, async () => (flow === workspace.id ? gate.then(task) : task())),
    );
  const lookups = jest.spyOn(keyLookups, 'find');
  try {
    // The workspace's limit in progress, each request held at its statement.
    const held = Array.from({ length: LIMIT }, () => get('/v1/companies?limit=1', key));
    const limiter = t.app.get(InFlightLimiter);
    await until("the held requests to take the workspace's places", () =>
      limiter.isFull(workspace.id),
    );
    expect(limiter.isFull(workspace.id)).toBe(true);
    const checked = lookups.mock.calls.length;

    const refused = await get('/v1/companies?limit=1', key);
    expect(refused.status).toBe(429);
    // Its log line says which limit refused it, and whose request it was.
    const line = logLines
      .map((text) => JSON.parse(text) as Record<string, unknown>)
      .find((entry) => entry.requestId === refused.headers['x-request-id']);
    expect(line).toMatchObject({
      statusCode: 429,
      refusedBy: 'in_flight_limit',
      workspaceId: workspace.id,
    });
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.headers['ratelimit']).toBe('"in-flight";r=0');
    expect(JSON.parse(refused.text)).toMatchObject({
      message: `Too many requests in progress for this workspace: at most ${LIMIT} at a time`,
    });
    // Refused on the key's last check, without a new one; and nothing of its per-minute budget.
    expect(lookups.mock.calls.length).toBe(checked);
    expect(refused.headers['x-ratelimit-remaining']).toBeUndefined();

    // Revoked meanwhile: still only ever refused, never served, on the remembered check.
    await t.prisma.apiKey.updateMany({
      where: { workspaceId: workspace.id },
      data: { revokedAt: new Date() },
    });
    expect((await get('/v1/companies?limit=1', key)).status).toBe(429);
    open();
    for (const response of await Promise.all(held)) expect(response.status).toBe(200);
    // Below the limit again: the request goes to the key's check, which refuses the revoked key.
    expect((await get('/v1/companies?limit=1', key)).status).toBe(401);
    expect(lookups.mock.calls.length).toBe(checked + 1);
  } finally {
    open();
    jest.restoreAllMocks();
  }
});

it("counts a known key's requests from their arrival: a burst arriving together makes at most the limit's key checks", async () => {
  const { workspace, key } = await createTenant(t.prisma);
  const keyLookups = t.app.get(KeyLookups);
  expect((await get('/v1/companies?limit=1', key)).status).toBe(200);
  // Every key check of the burst held until all of its requests have arrived and been decided.
  const find = keyLookups.find.bind(keyLookups);
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const lookups = jest
    .spyOn(keyLookups, 'find')
    .mockImplementation(async (hash) => gate.then(() => find(hash)));
  const BURST = 100;
  try {
    const answered: number[] = [];
    const burst = Array.from({ length: BURST }, () =>
      get('/v1/companies?limit=1', key).then((response) => {
        answered.push(response.status);
        return response;
      }),
    );
    // Each request either waits at its key check or has its answer.
    await until(
      'every request of the burst at its key check or answered',
      () => lookups.mock.calls.length + answered.length >= BURST,
      { detail: () => `${lookups.mock.calls.length} at the check, ${answered.length} answered` },
    );
    // Counted from arrival, the first LIMIT took the workspace's places and went on to their key
    // check; every other one was refused at once, without one. Counted after the check, all 100
    // would be waiting at it.
    expect(lookups.mock.calls.length).toBe(LIMIT);
    expect(answered).toEqual(Array.from({ length: BURST - LIMIT }, () => 429));
    open();
    const statuses = (await Promise.all(burst)).map(({ status }) => status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(LIMIT);
    expect(t.app.get(InFlightLimiter).remaining(workspace.id)).toBe(LIMIT);
  } finally {
    open();
    jest.restoreAllMocks();
  }
});

it("answers a refusal at arrival before the framework, as the guard's: same status, headers, body and log line", async () => {
  const { workspace, key } = await createTenant(t.prisma);
  const { key: unseenKey } = await createApiKey(t.prisma, workspace.id);
  const database = t.app.get(Database);
  const run = database.fairQueue.run.bind(database.fairQueue);
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  jest
    .spyOn(database.fairQueue, 'run')
    .mockImplementation(async (flow, task) =>
      run(flow, async () => (flow === workspace.id ? gate.then(task) : task())),
    );
  // Every request that reaches Express goes through its application's handle().
  const express = t.app.getHttpAdapter().getInstance() as { handle: () => void };
  const handled = jest.spyOn(express, 'handle');
  try {
    const held = Array.from({ length: LIMIT }, () => get('/v1/companies?limit=1', key));
    const limiter = t.app.get(InFlightLimiter);
    await until("the held requests to take the workspace's places", () =>
      limiter.isFull(workspace.id),
    );
    // A key never checked goes through the application: its key guard, then InFlightGuard's 429.
    handled.mockClear();
    const throughGuard = await get('/v1/companies?limit=1', unseenKey);
    expect(handled).toHaveBeenCalledTimes(1);
    // A key checked a moment ago is refused at arrival, before Express.
    const atArrival = await get('/v1/companies?limit=1', key);
    expect(handled).toHaveBeenCalledTimes(1);
    open();
    await Promise.all(held);

    const comparable = ({ status, headers, text }: RawResponse) => ({
      status,
      headers: Object.entries(headers).filter(([name]) => !['date', 'x-request-id'].includes(name)),
      body: { ...(JSON.parse(text) as object), timestamp: undefined },
    });
    expect(atArrival.status).toBe(429);
    expect(comparable(atArrival)).toStrictEqual(comparable(throughGuard));
    const lineOf = (response: RawResponse) => {
      const line = logLines
        .map((text) => JSON.parse(text) as Record<string, unknown>)
        .find((entry) => entry.requestId === response.headers['x-request-id']);
      return { ...line, requestId: undefined, time: undefined, durationMs: undefined };
    };
    expect(lineOf(atArrival)).toMatchObject({ refusedBy: 'in_flight_limit', statusCode: 429 });
    expect(lineOf(atArrival)).toStrictEqual(lineOf(throughGuard));
  } finally {
    open();
    jest.restoreAllMocks();
  }
});

it('counts at arrival exactly the reads that need a key, as the routing table has them', async () => {
  const keyed = t.app.get(KeyedRoutes);
  const response = await send(port, '/v1/openapi.json');
  const document = JSON.parse(response.body.toString()) as {
    paths: Record<string, Record<string, { security?: unknown[] }>>;
  };
  const documented = Object.entries(document.paths).flatMap(([path, operations]) =>
    operations.get ? [{ path: path.replace(/\{[^}]+\}/g, 'Some-id_1'), get: operations.get }] : [],
  );
  // Every read the document describes needs a key; each is counted at arrival, with or without a
  // trailing slash or a query.
  expect(documented.filter(({ get }) => !get.security?.length)).toEqual([]);
  for (const { path } of documented) {
    expect([path, keyed.isKeyedRead(path)]).toEqual([path, true]);
    expect([path, keyed.isKeyedRead(`${path}/?limit=1`)]).toEqual([path, true]);
  }
  expect(documented.length).toBeGreaterThanOrEqual(9);
  // No route (a 404 before any key is read), another case (routing is case-sensitive), the
  // health probes, the document and its page.
  const unkeyed = ['/v1', '/v1/companies/a/b', '/V1/ME', '/v1/Me', '/health/live', '/docs'];
  for (const path of [...unkeyed, '/v1/openapi.json']) {
    expect([path, keyed.isKeyedRead(path)]).toEqual([path, false]);
  }
  // `Changes` with a capital is a company's id, not the feed: keyed all the same.
  expect(keyed.isKeyedRead('/v1/companies/Changes')).toBe(true);
});

import { readFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { Client } from 'pg';
import { Database } from '../src/database/database';
import { PoolSaturatedError } from '../src/database/queryable';
import { CONNECTION_WAIT_MS, MAX_WAITING, POOL_SIZE } from '../src/database/pool-config';
import { LOG_DESTINATION } from '../src/logging/logging.module';
import { createTestApp, type TestApp } from './support/app';
import { waitForLockWaiter } from './support/database';
import { createCompany } from './support/factories';
import { createTenant, ISO_UTC_MILLIS } from './support/http';
import { listenOnLoopback, send, type RawResponse } from './support/raw-http';

/*
 * Load shedding (README, "When the database fails"): with every connection of the pool busy, a
 * statement waits at most CONNECTION_WAIT_MS for one, and is refused at once when MAX_WAITING
 * statements already wait: a 503 with `Retry-After: 1`, never the 5 s it used to wait.
 *
 * 1,000 concurrent requests on the app listening on loopback, while a transaction holds the
 * companies table locked: the first list statements take the pool's connections and block on the
 * lock, and every other request needs a connection it cannot get. What is asserted exactly is
 * behaviour: the queue never exceeds its bound, both kinds of refusal happen, and every refused
 * statement's wait for a connection (measured around Database.query, where the wait happens) is
 * either none or the bound, with a margin for late timers. A refused request's whole time, as the
 * client sees it, is not asserted: it also holds the CPU time that this one process (client and
 * server) spends on the 999 others, which is the machine's, not the service's (6.5 s on a machine
 * shared with four other test runs, 1.5 s on a quiet one). What is asserted instead is that every
 * refusal came back while the lock still held the pool's connections: none waited for one to free.
 */
const REQUESTS = 1_000;
/** A refused statement's wait for a connection: the bound, with a margin for late timers. */
const WAITED_AT_MOST_MS = CONNECTION_WAIT_MS * 2;

/** Every line the application writes (the filter's warnings say why each 503 was answered). */
const output: string[] = [];

let t: TestApp;
let port: number;
let key: string;
let locker: Client;
const agent = new Agent({ keepAlive: true, maxSockets: REQUESTS, maxFreeSockets: REQUESTS });

beforeAll(async () => {
  // Two file descriptors per request (the client's socket and the server's), in this one process.
  const limit = /Max open files\s+(\d+)/.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1];
  if (limit !== undefined && Number(limit) < 2 * REQUESTS + 500) {
    throw new Error(`This test needs ${2 * REQUESTS + 500} open files: raise \`ulimit -n\`.`);
  }
  t = await createTestApp({
    env: {
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PER_MINUTE: '1000000',
      AUTH_FAILURE_LIMIT_PER_MINUTE: '1000000',
    },
    customize: (builder) => {
      builder
        .overrideProvider(LOG_DESTINATION)
        .useValue({ write: (line: string) => void output.push(line) });
    },
  });
  port = await listenOnLoopback(t.app);
  const tenant = await createTenant(t.prisma);
  key = tenant.key;
  await createCompany(t.prisma, tenant.workspace.id);
  locker = new Client({ connectionString: t.database.url });
  await locker.connect();
}, 60_000);

afterAll(async () => {
  agent.destroy();
  await locker?.end();
  await t?.close();
});

const get = (path: string, headers: Record<string, string> = {}) =>
  send(port, path, { agent, headers });

/** Opens the agent's sockets in batches, so that the burst itself waits for no TCP handshake. */
async function openSockets(count: number): Promise<void> {
  for (let opened = 0; opened < count; opened += 100) {
    const batch = Array.from({ length: Math.min(100, count - opened) }, () => get('/health/live'));
    for (const response of await Promise.all(batch)) expect(response.status).toBe(200);
  }
}

it('waits at most a second for a connection (the bound that docs/security.md states)', () => {
  // The burst below measures waits against this constant: it is pinned here, so that raising it
  // back towards the 5 s that requests used to wait fails.
  expect(CONNECTION_WAIT_MS).toBeLessThanOrEqual(1_000);
});

it('serves before and after, and answers 1,000 concurrent requests at once or within a second', async () => {
  const { pool } = t.app.get(Database);
  await openSockets(REQUESTS);
  expect((await get('/v1/companies', { Authorization: `Bearer ${key}` })).status).toBe(200);

  await locker.query('BEGIN');
  await locker.query('LOCK TABLE companies IN ACCESS EXCLUSIVE MODE');
  const logStart = output.length;

  // The queue's length, sampled on every turn of the event loop while the burst runs.
  let mostWaiting = 0;
  let sampling = true;
  const sample = () => {
    mostWaiting = Math.max(mostWaiting, pool.waitingCount);
    if (sampling) setImmediate(sample);
  };
  sample();

  // How long each refused statement waited for a connection, and why it was refused.
  const database = t.app.get(Database);
  const query = database.query.bind(database);
  const waits: { ms: number; atOnce: boolean }[] = [];
  jest.spyOn(database, 'query').mockImplementation(async (sql: string, values: unknown[]) => {
    const began = performance.now();
    try {
      return await query(sql, values);
    } catch (error) {
      waits.push({ ms: performance.now() - began, atOnce: error instanceof PoolSaturatedError });
      throw error;
    }
  });

  let answered = 0;
  let lockReleased = false;
  const burst = Array.from({ length: REQUESTS }, async () => {
    const response = await get('/v1/companies?limit=1', { Authorization: `Bearer ${key}` });
    answered++;
    return { response, whileLocked: !lockReleased };
  });
  // The requests that hold the connections wait on the lock; every other one is answered first.
  await waitForLockWaiter(locker);
  for (let i = 0; i < 1_600 && answered < REQUESTS - POOL_SIZE; i++) {
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  lockReleased = true;
  await locker.query('ROLLBACK');
  const results = await Promise.all(burst);
  sampling = false;

  jest.restoreAllMocks();

  const refused = results.filter(({ response }) => response.status === 503);
  const served = results.filter(({ response }) => response.status === 200);
  expect(refused.length + served.length).toBe(REQUESTS);
  // The statements that held the pool's connections, and maybe a few that got one as it ended.
  expect(served.length).toBeGreaterThanOrEqual(1);
  expect(refused.length).toBeGreaterThanOrEqual(REQUESTS - 3 * POOL_SIZE);
  for (const { response, whileLocked } of refused) {
    expect(whileLocked).toBe(true);
    expectShed(response);
  }

  // One refused statement per refused request; most refused at once (the queue full), some after
  // waiting the bound (the queue not full when they came), none longer.
  expect(waits).toHaveLength(refused.length);
  const atOnce = waits.filter((wait) => wait.atOnce);
  const afterWaiting = waits.filter((wait) => !wait.atOnce);
  expect(atOnce.length).toBeGreaterThan(REQUESTS / 2);
  expect(afterWaiting.length).toBeGreaterThanOrEqual(1);
  // "At once" is the error's kind: PoolSaturatedError is thrown before any I/O. Its time is not
  // asserted: on a busy machine the event loop alone took 56 ms to get back to it.
  for (const { ms } of afterWaiting) {
    expect(ms).toBeGreaterThanOrEqual(CONNECTION_WAIT_MS - 5);
    expect(ms).toBeLessThan(WAITED_AT_MOST_MS);
  }
  // The queue never held more than its bound (without it, nearly every request would have waited
  // in it), and the filter logged why each request was refused.
  expect(mostWaiting).toBeGreaterThan(0);
  expect(mostWaiting).toBeLessThanOrEqual(MAX_WAITING);
  const reasons = output
    .slice(logStart)
    .map((line) => (JSON.parse(line) as { msg?: string }).msg ?? '')
    .filter((message) => message.startsWith('Database unavailable'));
  expect(reasons.filter((reason) => reason.includes('pool saturated'))).toHaveLength(atOnce.length);
  expect(reasons.filter((reason) => reason.includes('timeout exceeded'))).toHaveLength(
    afterWaiting.length,
  );

  // Served again as soon as the lock is gone, without a restart.
  expect((await get('/v1/companies', { Authorization: `Bearer ${key}` })).status).toBe(200);
}, 120_000);

function expectShed(response: RawResponse): void {
  expect(response.status).toBe(503);
  expect(response.headers['retry-after']).toBe('1');
  expect(JSON.parse(response.text)).toStrictEqual({
    statusCode: 503,
    message: 'Service temporarily unavailable',
    error: 'SERVICE_UNAVAILABLE',
    path: '/v1/companies?limit=1',
    timestamp: expect.stringMatching(ISO_UTC_MILLIS),
  });
}

import { readFileSync } from 'node:fs';
import { Agent, request, type IncomingMessage } from 'node:http';
import { Database, MAX_QUEUED_STATEMENTS } from '../../../src/database/database';
import { OverloadedError } from '../../../src/database/fair-queue';
import { POOL_SIZE } from '../../../src/database/pool-config';
import { LOG_DESTINATION } from '../../../src/logging/logging.module';
import { createTestApp, type TestApp } from '../../support/app';
import { createCompany } from '../../support/factories';
import { createTenant, ISO_UTC_MILLIS } from '../../support/http';
import { listenOnLoopback, send, type RawResponse } from '../../support/raw-http';
import { until } from '../../support/until';

/*
 * Load shedding (docs/operations.md, "When the database fails"; docs/api.md, 503): the service's own overload
 * is a 503 with `Retry-After: 1`, given at once when the backlog cannot be served within
 * QUEUE_DEADLINE_MS, or at that deadline when the estimate was wrong; never a longer wait.
 *
 * 1,000 concurrent requests of one workspace whose in-flight limit is raised out of the way, on
 * the app listening on loopback, while the statements that get a seat of the fair queue are held
 * there, as by a database that stalled: every other one waits for a seat it cannot get. (Held in
 * the test rather than on a locked table, whose statements the 5 s statement timeout would cut on
 * a machine slow to answer the 1,000.) What is asserted is behaviour: the queue never exceeds its
 * bound, both kinds of refusal happen (told apart by the error's words, never by a duration: a
 * busy machine's event loop alone can take 50 ms), every refusal came back while the seats were
 * held, and the service serves again at once when they are free. The key lookups never queue
 * there: every request was attributed to its workspace (none was a 401 or a 503 of the key check).
 */
const REQUESTS = 1_000;
const DEADLINE_MS = 2_000;

/** Every line the application writes (the filter's warnings say why each 503 was answered). */
const output: string[] = [];

let t: TestApp;
let port: number;
let key: string;
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
      MAX_IN_FLIGHT_PER_WORKSPACE: String(REQUESTS),
      QUEUE_DEADLINE_MS: String(DEADLINE_MS),
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
}, 60_000);

afterAll(async () => {
  agent.destroy();
  await t?.close();
});

const get = (path: string, headers: Record<string, string> = {}) =>
  send(port, path, { agent, headers });

/**
 * Opens the agent's sockets in batches of 100, so that the burst itself waits for no TCP handshake
 * (900 at once overflow the listen backlog of 511 on a loaded machine, and a dropped SYN is sent
 * again only after a second, then 3, 7, 15...). Each response is read only once every socket is
 * open: a socket whose response was read is free, and the agent would reuse it for the next batch.
 */
async function openSockets(count: number): Promise<void> {
  const held: IncomingMessage[] = [];
  for (let opened = 0; opened < count; opened += 100) {
    const batch = Array.from(
      { length: Math.min(100, count - opened) },
      () =>
        new Promise<IncomingMessage>((resolve, reject) => {
          const outgoing = request(
            { host: '127.0.0.1', port, path: '/health/live', agent },
            resolve,
          );
          outgoing.on('error', reject);
          outgoing.end();
        }),
    );
    held.push(...(await Promise.all(batch)));
  }
  for (const response of held) expect(response.statusCode).toBe(200);
  await Promise.all(
    held.map((response) => new Promise((resolve) => response.resume().on('end', resolve))),
  );
  await until('every socket to be free in the agent', () => freeSockets() === count);
}

const freeSockets = () => Object.values(agent.freeSockets).flat().length;

it('serves before and after, and sheds 1,000 concurrent requests at once or at the deadline', async () => {
  const database = t.app.get(Database);
  const { fairQueue } = database;
  await openSockets(REQUESTS);
  expect((await get('/v1/companies', { Authorization: `Bearer ${key}` })).status).toBe(200);

  const logStart = output.length;

  // The queue's length, sampled on every turn of the event loop while the burst runs.
  let mostWaiting = 0;
  let sampling = true;
  const sample = () => {
    mostWaiting = Math.max(mostWaiting, fairQueue.waiting);
    if (sampling) setImmediate(sample);
  };
  sample();

  // Why each refused statement was refused; those that get a seat hold it until released.
  const run = fairQueue.run.bind(fairQueue);
  const shed: string[] = [];
  let holding = 0;
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  jest.spyOn(fairQueue, 'run').mockImplementation((workspace, task) =>
    run(workspace, async () => {
      holding++;
      await released;
      return task();
    }).catch((error: unknown) => {
      expect(error).toBeInstanceOf(OverloadedError);
      shed.push((error as Error).message);
      throw error;
    }),
  );

  let answered = 0;
  let seatsReleased = false;
  const burst = Array.from({ length: REQUESTS }, async () => {
    const response = await get('/v1/companies?limit=1', { Authorization: `Bearer ${key}` });
    answered++;
    return { response, whileHeld: !seatsReleased };
  });
  // The requests that hold the workspace's seats wait; every other one is answered (shed) first,
  // so that none of them is answered after the seats are free.
  await until("the workspace's seats to be held", () => holding >= fairQueue.seatsPerFlow, {
    withinMs: 40_000,
    detail: () => `${holding} held`,
  });
  await until(
    'every other request to be answered',
    () => answered >= REQUESTS - fairQueue.seatsPerFlow,
    { withinMs: 40_000, detail: () => `${answered} answered` },
  );
  seatsReleased = true;
  release();
  const results = await Promise.all(burst);
  sampling = false;
  jest.restoreAllMocks();

  const refused = results.filter(({ response }) => response.status === 503);
  const served = results.filter(({ response }) => response.status === 200);
  expect(refused.length + served.length).toBe(REQUESTS);
  // The statements that held the seats, and maybe a few that got one as they were released.
  expect(served.length).toBeGreaterThanOrEqual(1);
  expect(refused.length).toBeGreaterThanOrEqual(REQUESTS - 3 * POOL_SIZE);
  for (const { response, whileHeld } of refused) {
    expect(whileHeld).toBe(true);
    expectShed(response);
  }

  // One shed statement per refused request: most at once (the backlog could not drain in time),
  // some at the deadline (admitted, then the stalled statements made it too long), none later.
  expect(shed).toHaveLength(refused.length);
  const atOnce = shed.filter((reason) => reason.includes('would not drain'));
  const atDeadline = shed.filter((reason) =>
    reason.includes(`no connection within ${DEADLINE_MS} ms`),
  );
  expect(atOnce.length + atDeadline.length).toBe(shed.length);
  expect(atOnce.length).toBeGreaterThan(REQUESTS / 2);
  // The queue never held more than its bound, and the filter logged why each one was refused.
  expect(mostWaiting).toBeGreaterThan(0);
  expect(mostWaiting).toBeLessThanOrEqual(MAX_QUEUED_STATEMENTS);
  const reasons = output
    .slice(logStart)
    .map((line) => JSON.parse(line) as { msg?: string; refusedBy?: string })
    .filter((line) => line.msg?.startsWith('Database unavailable: overloaded'));
  expect(reasons).toHaveLength(refused.length);

  // Served again as soon as the seats are free, without a restart.
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

import { PrismaPg } from '@prisma/adapter-pg';
import type { ChildProcess } from 'node:child_process';
import { Agent, request } from 'node:http';
import { COMPANY_FIELDS, MAX_CONTACTS_PER_COMPANY } from '../../src/companies/company.fields';
import { POOL_SIZE } from '../../src/database/pool-config';
import { findFreePort } from '../../src/dev/free-port';
import { PrismaClient } from '../../src/generated/prisma/client';
import { MAX_LIMIT } from '../../src/http/list-query.dto';
import {
  HEAP_BYTES_PER_BODY_BYTE,
  INLINE_BODY_BYTES,
  LARGE_BODIES_HEAP_BYTES,
} from '../../src/items/body-budget';
import { largestResponses } from '../support/largest-responses';
import { shippedNodeFlags } from '../support/node-flags';
import { spawnBuilt } from '../support/built-process';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { loadLargestCompanies } from '../support/largest-items';
import { createTenant } from '../support/http';
import { until } from '../support/until';

/*
 * The worst page the bounds allow, read by many clients at once from the built server with the
 * heap flags of `npm run start:prod` (issue 13, point 1): a workspace of 200 companies as large as
 * the bounds allow (support/largest-items.ts: 14.6 MB a page, held as a two-byte string). Every
 * answer must be a complete 200 (a 503 is load shed by design, and retried after its Retry-After,
 * as the client does), and the server must be the same process at the end.
 */
// The node flags the server ships with (package.json), and GC traces to read the heap.
const NODE_FLAGS = [...shippedNodeFlags('server'), '--trace-gc'];
const CLIENTS = 24;
const ROUNDS = 2;
const CLIENT_TIMEOUT_MS = 60_000;
const PAGE = `/v1/companies?limit=${MAX_LIMIT}`;
const MIB = 1024 * 1024;
// The heap the design lets bodies take (items/body-budget.ts: the pool's connections each bringing
// in a body of ordinary size, and the budget of large ones), and 16 MiB for the rest of the
// process (11 MiB after start-up; requests in flight, sockets). V8's trace prints MiB.
const HEAP_BOUND_MIB =
  (POOL_SIZE * HEAP_BYTES_PER_BODY_BYTE * INLINE_BODY_BYTES + LARGE_BODIES_HEAP_BYTES) / MIB + 16;

let database: TestDatabase;
let prisma: PrismaClient;
let server: ChildProcess | undefined;
const agents: Agent[] = [];
let output: string[] = [];

afterAll(async () => {
  if (server && server.exitCode === null && server.signalCode === null) server.kill('SIGKILL');
  for (const agent of agents) agent.destroy();
  await prisma?.$disconnect();
  await database?.drop();
});

interface Answer {
  status?: number;
  retryAfter?: string;
  length?: string;
  bytes: Buffer;
  error?: string;
}

function get(agent: Agent, port: number, path: string, key: string): Promise<Answer> {
  return new Promise((resolve) => {
    const call = request(
      { agent, host: '127.0.0.1', port, path, headers: { Authorization: `Bearer ${key}` } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode,
            retryAfter: response.headers['retry-after'],
            length: response.headers['content-length'],
            bytes: Buffer.concat(chunks),
          }),
        );
        response.on('error', (error) => resolve({ bytes: Buffer.alloc(0), error: error.message }));
      },
    );
    call.setTimeout(CLIENT_TIMEOUT_MS, () => call.destroy(new Error('client timeout')));
    call.on('error', (error: NodeJS.ErrnoException) =>
      resolve({ bytes: Buffer.alloc(0), error: error.code ?? error.message }),
    );
    call.end();
  });
}

/** The largest live heap after each full collection, in MB, from --trace-gc's lines. */
function largestHeapAfterMarkCompact(): number {
  const lines = output
    .join('')
    .matchAll(/Mark-Compact[^\n]*? ([0-9.]+) \(([0-9.]+)\) -> ([0-9.]+)/g);
  return Math.max(0, ...[...lines].map((match) => Number(match[3])));
}

it(`${CLIENTS} clients read the largest page ${ROUNDS} times at once: complete 200s, same process`, async () => {
  database = await createTestDatabase();
  prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: database.url }) });
  const { workspace, key } = await createTenant(prisma);
  await loadLargestCompanies(database.url, workspace.id, MAX_LIMIT);

  const port = await findFreePort();
  const running = spawnBuilt('main.js', {
    databaseUrl: database.url,
    nodeFlags: NODE_FLAGS,
    // 24 clients of one workspace: the in-flight limit (20) out of the way, as the rate limit.
    env: {
      PORT: String(port),
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PER_MINUTE: '1000000',
      MAX_IN_FLIGHT_PER_WORKSPACE: '100',
    },
  });
  server = running.process;
  output = running.output;
  const pid = server.pid;
  let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  void running.exited.then((exited) => (exit = exited));

  const probe = new Agent({ keepAlive: true });
  agents.push(probe);
  await until(
    'the server to answer',
    async () => {
      if (exit) throw new Error(`The server exited:\n${output.join('')}`);
      return (await get(probe, port, '/v1/me', key)).status === 200;
    },
    { withinMs: 30_000, detail: () => `Server output:\n${output.join('')}` },
  );

  // Each client reads the page ROUNDS times, a 503 retried after its Retry-After.
  const load = new Agent({ keepAlive: true, maxSockets: CLIENTS });
  agents.push(load);
  const pages: Answer[] = [];
  let shed = 0;
  const failures: string[] = [];
  const started = Date.now();
  for (let round = 0; round < ROUNDS; round++) {
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        for (;;) {
          const answer = await get(load, port, PAGE, key);
          if (answer.status === 503 && answer.retryAfter !== undefined) {
            shed++;
            await new Promise((resolve) => setTimeout(resolve, Number(answer.retryAfter) * 1000));
            continue;
          }
          if (answer.status !== 200) {
            failures.push(
              `${answer.status ?? answer.error}: ${answer.bytes.toString().slice(0, 200)}`,
            );
          } else {
            pages.push(answer);
          }
          return;
        }
      }),
    );
  }
  const seconds = (Date.now() - started) / 1000;

  expect({ failures, exit }).toEqual({ failures: [], exit: undefined });
  expect(server.pid).toBe(pid);
  expect(pages).toHaveLength(CLIENTS * ROUNDS);
  const { companyPage } = largestResponses();
  for (const page of pages) {
    // Complete: every byte announced arrived, and it is the whole page.
    expect(page.bytes.length).toBe(Number(page.length));
    const body = JSON.parse(page.bytes.toString('utf8')) as {
      data: { name: string; contacts: { linkedin: string }[] }[];
    };
    expect(body.data).toHaveLength(MAX_LIMIT);
    for (const company of body.data) {
      expect([...company.name]).toHaveLength(COMPANY_FIELDS.name.maxLength);
      expect(company.contacts).toHaveLength(MAX_CONTACTS_PER_COMPANY);
    }
  }
  // The page read is the largest the bounds allow, within what the bound leaves to numbers and
  // dates at their very longest (support/response-size.ts).
  expect(pages[0].bytes.length).toBeLessThanOrEqual(companyPage);
  expect(pages[0].bytes.length).toBeGreaterThan(0.98 * companyPage);
  // Still the same process, answering: on a new connection. The probe's kept-alive one has been
  // idle since the load began, and the pages' checks above hold this event loop for seconds: the
  // server may close it (its keep-alive timeout, 65 s) while this process, busy, has not yet seen
  // the close, and the request would go out on a closed socket (ECONNRESET, no status).
  const fresh = new Agent({ keepAlive: false });
  agents.push(fresh);
  const after = await get(fresh, port, '/v1/me', key);
  expect({ status: after.status, error: after.error }).toEqual({ status: 200, error: undefined });
  expect(exit).toBeUndefined();
  const heap = largestHeapAfterMarkCompact();
  process.stdout.write(
    `large pages: ${pages.length} pages of ${(pages[0].bytes.length / 1e6).toFixed(1)} MB in ${seconds.toFixed(1)} s, ${shed} shed and retried, largest heap after a full GC ${heap} MB\n`,
  );
  // Within the design's bound, not only under the limit: a body held twice over goes past it.
  expect(heap).toBeLessThan(HEAP_BOUND_MIB);
}, 300_000);

import { PrismaPg } from '@prisma/adapter-pg';
import type { ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'pg';
import { PrismaClient } from '../src/generated/prisma/client';
import { runAdminCommand } from './support/admin';
import { type BuiltProcess, spawnBuilt } from './support/built-process';
import { createTestDatabase, type TestDatabase } from './support/database';
import { createCompany } from './support/factories';
import { createTenant } from './support/http';
import { Receiver, waitFor, WEBHOOK_ENV } from './support/webhooks';

// The built worker (`node dist/worker/main.js`, as the compose file runs it; `npm test` builds
// it first) as a process: killed mid-delivery it loses nothing, SIGTERM drains it, and the
// private-network escape hatch does not start in production.

jest.setTimeout(180_000);

let database: TestDatabase;
let prisma: PrismaClient;
let sql: Client;
const receivers: Receiver[] = [];
const workers: ChildProcess[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: database.url }) });
  sql = new Client({ connectionString: database.url });
  await sql.connect();
});

afterAll(async () => {
  for (const worker of workers) if (worker.exitCode === null) worker.kill('SIGKILL');
  await Promise.all(receivers.map((receiver) => receiver.stop()));
  await sql?.end();
  await prisma?.$disconnect();
  await database?.drop();
});

function startWorker(env: Record<string, string> = {}): BuiltProcess {
  const worker = spawnBuilt('worker/main.js', {
    databaseUrl: database.url,
    env: {
      // Not production: the private-network escape hatch (the receivers are on 127.0.0.1).
      NODE_ENV: 'test',
      ...WEBHOOK_ENV,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      // A killed worker's attempt is taken again after its lease, twice this.
      WEBHOOK_TIMEOUT_MS: '3000',
      LOG_LEVEL: 'info',
      ...env,
    },
  });
  workers.push(worker.process);
  return worker;
}

async function endpointFor(workspaceId: string, url: string): Promise<string> {
  const run = await runAdminCommand(
    { DATABASE_URL: database.url, ...WEBHOOK_ENV },
    'webhook',
    'create',
    '--workspace',
    workspaceId,
    '--url',
    url,
    '--json',
  );
  expect(run).toMatchObject({ status: 0, stderr: '' });
  return (JSON.parse(run.stdout) as { id: string }).id;
}

async function eventStates(endpointId: string): Promise<string[]> {
  const { rows } = await sql.query<{ state: string }>(
    'SELECT state FROM webhook_events WHERE endpoint_id = $1 ORDER BY id',
    [endpointId],
  );
  return rows.map((row) => row.state);
}

it('a worker killed with SIGKILL mid-delivery: after a restart every event is delivered, the interrupted one again', async () => {
  const { workspace } = await createTenant(prisma);
  let holding = true;
  const receiver = new Receiver(() => (holding ? 'hold' : 200));
  receivers.push(receiver);
  const endpointId = await endpointFor(workspace.id, await receiver.start());
  const companies = await Promise.all([1, 2, 3].map(() => createCompany(prisma, workspace.id)));

  const first = startWorker();
  await waitFor('a delivery in flight', () => receiver.requests.length >= 1);
  first.process.kill('SIGKILL');
  expect(await first.exited).toMatchObject({ signal: 'SIGKILL' });
  const interrupted = String(receiver.requests[0].headers['webhook-id']);
  // Nothing was recorded for the interrupted attempts.
  expect(await eventStates(endpointId)).toEqual(['pending', 'pending', 'pending']);

  holding = false;
  const second = startWorker();
  await waitFor(
    'every event delivered',
    async () => (await eventStates(endpointId)).every((state) => state === 'delivered'),
    60_000,
  );
  const delivered = receiver.requests.filter((request) => request.status === 200);
  expect(new Set(receiver.events().map((event) => event.data.id))).toEqual(
    new Set(companies.map((company) => company.id)),
  );
  expect(delivered.map((request) => request.headers['webhook-id'])).toContain(interrupted);
  expect(new Set(delivered.map((request) => request.headers['webhook-id'])).size).toBe(3);
  second.process.kill('SIGTERM');
  expect(await second.exited).toMatchObject({ code: 0 });
});

it('SIGTERM drains: the attempt in flight is answered and recorded, then the worker exits 0', async () => {
  const { workspace } = await createTenant(prisma);
  const receiver = new Receiver(async () => {
    await sleep(1_500);
    return 200;
  });
  receivers.push(receiver);
  const endpointId = await endpointFor(workspace.id, await receiver.start());
  await createCompany(prisma, workspace.id);

  const worker = startWorker();
  await waitFor('a delivery in flight', () => receiver.requests.length >= 1);
  worker.process.kill('SIGTERM');
  expect(await worker.exited).toMatchObject({ code: 0 });
  expect(await eventStates(endpointId)).toEqual(['delivered']);
  expect(worker.output.join('')).toMatch(/draining/);
  // Its lines in the server's format: level names and ISO times, one JSON object a line.
  const lines = worker.output
    .join('')
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { level: unknown; time: unknown; service: unknown });
  expect(lines.length).toBeGreaterThan(0);
  for (const line of lines) {
    expect(line).toMatchObject({
      level: expect.stringMatching(/^(info|warn|error|fatal)$/),
      time: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      service: 'webhook-worker',
    });
  }
});

it('refuses WEBHOOK_ALLOW_PRIVATE_NETWORKS in production unless confirmed', async () => {
  const refused = startWorker({ NODE_ENV: 'production' });
  expect(await refused.exited).toMatchObject({ code: 1 });
  expect(refused.output.join('')).toMatch(/WEBHOOK_ALLOW_PRIVATE_NETWORKS is for tests/);

  const confirmed = startWorker({
    NODE_ENV: 'production',
    WEBHOOK_ALLOW_PRIVATE_NETWORKS_IN_PRODUCTION: 'i-understand',
  });
  await waitFor('the confirmed worker to start', () =>
    confirmed.output.join('').includes('webhook worker started'),
  );
  confirmed.process.kill('SIGTERM');
  expect(await confirmed.exited).toMatchObject({ code: 0 });
});

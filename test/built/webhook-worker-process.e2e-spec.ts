import { PrismaPg } from '@prisma/adapter-pg';
import type { ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'pg';
import { findFreePort } from '../../src/dev/free-port';
import { PrismaClient } from '../../src/generated/prisma/client';
import { METRIC_PREFIX } from '../../src/metrics/process-metrics';
import { runAdminCommand } from '../support/admin';
import { type BuiltProcess, spawnBuilt } from '../support/built-process';
import { allowConnections, createTestDatabase, type TestDatabase } from '../support/database';
import { createCompany } from '../support/factories';
import { createTenant } from '../support/http';
import { sampleValue } from '../support/prometheus-text';
import { Receiver, WEBHOOK_ENV } from '../support/webhooks';
import { until } from '../support/until';

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

function startWorker(
  env: Record<string, string> = {},
  databaseUrl: string = database.url,
): BuiltProcess {
  const worker = spawnBuilt('worker/main.js', {
    databaseUrl,
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
  await until('a delivery in flight', () => receiver.requests.length >= 1);
  first.process.kill('SIGKILL');
  expect(await first.exited).toMatchObject({ signal: 'SIGKILL' });
  const interrupted = String(receiver.requests[0].headers['webhook-id']);
  // Nothing was recorded for the interrupted attempts.
  expect(await eventStates(endpointId)).toEqual(['pending', 'pending', 'pending']);

  holding = false;
  const second = startWorker();
  await until(
    'every event delivered',
    async () => (await eventStates(endpointId)).every((state) => state === 'delivered'),
    { withinMs: 60_000 },
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
  await until('a delivery in flight', () => receiver.requests.length >= 1);
  worker.process.kill('SIGTERM');
  // A second signal during the drain (a Ctrl-C on `npm run` comes twice) changes nothing.
  await until('the drain to start', () => worker.output.join('').includes('draining'));
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
  await until('the confirmed worker to start', () =>
    confirmed.output.join('').includes('webhook worker started'),
  );
  confirmed.process.kill('SIGTERM');
  expect(await confirmed.exited).toMatchObject({ code: 0 });
});

describe('METRICS_PORT: the metrics and the probes of the worker', () => {
  const metricsOf = async (port: number) => {
    const response = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(response.status).toBe(200);
    return response.text();
  };
  const value = (text: string, name: string, labels: Record<string, string> = {}) =>
    sampleValue(text, `${METRIC_PREFIX}${name}`, labels);

  it('counts attempts by outcome and the delivery lag, reads the backlog, and answers the probes', async () => {
    const port = await findFreePort();
    const { workspace } = await createTenant(prisma);
    const healthy = new Receiver(() => 200);
    const gone = new Receiver(() => 410);
    receivers.push(healthy, gone);
    await endpointFor(workspace.id, await healthy.start());
    const goneId = await endpointFor(workspace.id, await gone.start());
    await createCompany(prisma, workspace.id);

    const worker = startWorker({ METRICS_PORT: String(port) });
    await until('the worker to start', () =>
      worker.output.join('').includes('webhook worker started'),
    );
    const live = await fetch(`http://127.0.0.1:${port}/health/live`);
    expect([live.status, await live.json()]).toEqual([
      200,
      { status: 'ok', info: {}, error: {}, details: {} },
    ]);
    await until('both attempts recorded', async () => {
      const text = await metricsOf(port);
      return (
        value(text, 'webhook_attempts_total', { outcome: 'delivered' }) === 1 &&
        value(text, 'webhook_attempts_total', { outcome: 'gone' }) === 1
      );
    });
    // Read at the scrape: nothing waits, the endpoint that answered 410 is disabled.
    await sleep(1_100);
    const text = await metricsOf(port);
    expect(value(text, 'webhook_attempts_total', { outcome: 'failed' })).toBe(0);
    expect(value(text, 'webhook_delivery_lag_seconds_count')).toBe(1);
    expect(value(text, 'webhook_delivery_lag_seconds_bucket', { le: '+Inf' })).toBe(1);
    expect(value(text, 'webhook_events_pending')).toBe(0);
    expect(value(text, 'webhook_events_due')).toBe(0);
    expect(value(text, 'webhook_oldest_due_event_seconds')).toBe(0);
    expect(value(text, 'webhook_endpoints_disabled')).toBe(1);
    expect(value(text, 'database_up')).toBe(1);
    expect(value(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(await eventStates(goneId)).toEqual(['paused']);

    // A due event not yet attempted: counted, with how long it has waited.
    await sql.query(
      `UPDATE webhook_events SET state = 'pending', next_attempt_at = now() - interval '90 seconds'
       WHERE endpoint_id = $1`,
      [goneId],
    );
    await sleep(1_100);
    const waiting = await metricsOf(port);
    expect(value(waiting, 'webhook_events_pending')).toBe(1);
    expect(value(waiting, 'webhook_events_due')).toBe(1);
    expect(value(waiting, 'webhook_oldest_due_event_seconds')).toBeGreaterThanOrEqual(90);

    const ready = await fetch(`http://127.0.0.1:${port}/health/ready`);
    expect([ready.status, await ready.json()]).toEqual([
      200,
      {
        status: 'ok',
        info: { worker: { status: 'up' }, database: { status: 'up' } },
        error: {},
        details: { worker: { status: 'up' }, database: { status: 'up' } },
      },
    ]);
    expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(404);
    expect((await fetch(`http://127.0.0.1:${port}/health/ready`, { method: 'POST' })).status).toBe(
      405,
    );
    worker.process.kill('SIGTERM');
    expect(await worker.exited).toMatchObject({ code: 0 });
  });

  it('is not ready, and says the database is down, while the database refuses it', async () => {
    const port = await findFreePort();
    // Directly, even in the run behind PgBouncer, which would hold the statements while the
    // database is away rather than fail them (as
    // test/e2e/webhooks/webhook-worker-outage.e2e-spec.ts says).
    const worker = startWorker({ METRICS_PORT: String(port) }, database.directUrl);
    await until('the worker to start', () =>
      worker.output.join('').includes('webhook worker started'),
    );
    // This file's own connection is ended with the others: its error is expected.
    sql.on('error', () => undefined);
    await allowConnections(database, false);
    try {
      const ready = await fetch(`http://127.0.0.1:${port}/health/ready`);
      const body = (await ready.json()) as { status: string; error: Record<string, unknown> };
      expect([ready.status, body.status]).toEqual([503, 'error']);
      expect(body.error).toEqual({
        database: { status: 'down', message: expect.stringMatching(/^(unreachable|no answer)/) },
      });
      expect(value(await metricsOf(port), 'database_up')).toBe(0);
      // Alive all the same: a restart cures no database outage.
      expect((await fetch(`http://127.0.0.1:${port}/health/live`)).status).toBe(200);
    } finally {
      await allowConnections(database, true);
      await sql.end().catch(() => undefined);
      sql = new Client({ connectionString: database.url });
      await sql.connect();
    }
    worker.process.kill('SIGTERM');
    expect(await worker.exited).toMatchObject({ code: 0 });
  });
});

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from 'pg';
import type { WebhookWorker } from '../../../src/worker/webhook-worker';
import { runAdminCommand } from '../../support/admin';
import { createTestApp, type TestApp } from '../../support/app';
import { createTenant } from '../../support/http';
import { Receiver, testWorker, WEBHOOK_ENV } from '../../support/webhooks';
import { until } from '../../support/until';

/*
 * Webhook delivery under one endpoint that hangs (docs/webhook-worker.md, "One endpoint's share"):
 * the worker gives an endpoint at most its share of the attempts in flight, and records each
 * attempt as soon as it ends. A workspace's endpoint that never answers gets 300 events; while its
 * first attempts hang, another workspace's healthy endpoint gets its events, and they are delivered
 * and recorded before any of the hanging attempts has ended (the worker's timeout is 10 s here).
 *
 * Asserted as an order of things, never as a duration: the healthy endpoint has all its events,
 * each recorded as delivered, while the hanging receiver still holds every request it was sent (it
 * saw none of them closed). With one pool of places shared by every endpoint, the hanging endpoint's
 * attempts take them all, and the healthy events wait for those attempts to time out.
 */
const HANGING_EVENTS = 300;
const HEALTHY_EVENTS = 30;
const PER_ENDPOINT = 20;

/** A receiver that never answers, and tells how many requests it holds and how many ended. */
class HangingReceiver {
  held = 0;
  mostHeld = 0;
  ended = 0;
  private readonly open: ServerResponse[] = [];
  private server?: Server;

  async start(): Promise<string> {
    this.server = createServer((request: IncomingMessage, response: ServerResponse) => {
      this.held++;
      this.mostHeld = Math.max(this.mostHeld, this.held);
      this.open.push(response);
      request.resume();
      // The worker gave up on it (its timeout): the connection closes without an answer.
      response.once('close', () => {
        this.held--;
        this.ended++;
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
  }

  async stop(): Promise<void> {
    for (const response of this.open) response.destroy();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}

let t: TestApp;
let sql: Client;
let worker: WebhookWorker;
const hanging = new HangingReceiver();
const healthy = new Receiver(() => 200);

beforeAll(async () => {
  t = await createTestApp();
  sql = new Client({ connectionString: t.database.url });
  await sql.connect();
  worker = testWorker(t.database.url, { timeoutMs: 10_000, perEndpoint: PER_ENDPOINT });
  await worker.start();
}, 60_000);

afterAll(async () => {
  await hanging.stop();
  await worker?.stop();
  await healthy.stop();
  await sql?.end();
  await t?.close();
}, 60_000);

async function createEndpoint(workspaceId: string, url: string): Promise<string> {
  const run = await runAdminCommand(
    { DATABASE_URL: t.database.url, ...WEBHOOK_ENV },
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

async function insertCompanies(workspaceId: string, count: number): Promise<void> {
  await sql.query(
    `INSERT INTO companies (id, workspace_id, name, domain, industry, size, country, city,
       revenue, intent_score, intent_level, icp_score, commercial_score, crm_status,
       visits_count, first_seen, last_seen)
     SELECT $1 || '_' || n, $1, 'Company ' || n, 'c' || n || '.example', 'Software', '1-10',
       'France', 'Lyon', '1M', 50, 'warm', 50, 50, 'new', 1, now(), now()
     FROM generate_series(1, $2) n`,
    [workspaceId, count],
  );
}

it("delivers and records a healthy endpoint's events while another workspace's endpoint hangs", async () => {
  const stuck = await createTenant(t.prisma);
  const fine = await createTenant(t.prisma);
  await createEndpoint(stuck.workspace.id, await hanging.start());
  const healthyId = await createEndpoint(fine.workspace.id, await healthy.start());

  await insertCompanies(stuck.workspace.id, HANGING_EVENTS);
  // The hanging endpoint holds its whole share before the healthy endpoint has anything to get.
  await until('the hanging endpoint to hold its share', () => hanging.held >= PER_ENDPOINT);
  await insertCompanies(fine.workspace.id, HEALTHY_EVENTS);

  await until('the healthy events', () => healthy.requests.length >= HEALTHY_EVENTS);
  await until('the healthy events recorded as delivered', async () => {
    const { rows } = await sql.query<{ delivered: number }>(
      `SELECT count(*)::int AS delivered FROM webhook_events
       WHERE endpoint_id = $1 AND state = 'delivered'`,
      [healthyId],
    );
    return rows[0].delivered === HEALTHY_EVENTS;
  });
  // All of that while every hanging attempt was still open: none had to end to make room.
  expect(hanging.ended).toBe(0);
  expect(hanging.held).toBeGreaterThanOrEqual(PER_ENDPOINT);
  // And the hanging endpoint never held more than its share.
  expect(hanging.mostHeld).toBe(PER_ENDPOINT);
}, 120_000);

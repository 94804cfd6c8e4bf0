import { Client } from 'pg';
import { pino } from 'pino';
import PgBoss from 'pg-boss';
import { setTimeout as sleep } from 'node:timers/promises';
import { randomBytes } from 'node:crypto';
import { verifyWebhook } from '../../../clients/typescript/src/webhooks';
import { RETRY_DELAYS_MS } from '../../../src/worker/delivery/retry-schedule';
import { DELIVERY_QUEUE } from '../../../src/worker/webhook-queue';
import type { WebhookWorker } from '../../../src/worker/webhook-worker';
import { runAdminCommand } from '../../support/admin';
import { createTestApp, type TestApp } from '../../support/app';
import { createCompany } from '../../support/factories';
import { createTenant, getWithKey } from '../../support/http';
import {
  type Answer,
  type Received,
  Receiver,
  testWorker,
  verifyWith,
  WEBHOOK_ENV,
} from '../../support/webhooks';
import { until } from '../../support/until';

// Webhooks end to end (docs/webhooks.md): the admin tool's endpoints, events from the change
// tracking whoever writes, real receivers on 127.0.0.1, signatures checked by the scheme's own
// package, and the delivery rules on a manual clock.

interface Endpoint {
  id: string;
  secret: string;
}

interface AttemptRow {
  attempt: number;
  attempted_at: Date;
  status: number | null;
  error: string | null;
}

const HOUR = 60 * 60 * 1000;
// Longer than a job's longest sleep in the test worker (1 s): nothing sent in this time means
// nothing was due.
const QUIET_MS = 2_500;

// Each test waits for deliveries, up to 30 s each when the machine is loaded.
jest.setTimeout(180_000);

describe('webhooks', () => {
  let t: TestApp;
  let worker: WebhookWorker;
  let sql: Client;
  const receivers: Receiver[] = [];

  beforeAll(async () => {
    t = await createTestApp();
    sql = new Client({ connectionString: t.database.url });
    await sql.connect();
    // Without jitter: the schedule's delays exactly.
    worker = testWorker(t.database.url, { clock: t.clock, random: () => 0 });
    await worker.start();
  });

  afterAll(async () => {
    await worker?.stop();
    await Promise.all(receivers.map((receiver) => receiver.stop()));
    await sql?.end();
    await t?.close();
  });

  const admin = (...argv: string[]) =>
    runAdminCommand({ DATABASE_URL: t.database.url, ...WEBHOOK_ENV }, ...argv);

  async function adminJson<T>(...argv: string[]): Promise<T> {
    const run = await admin(...argv, '--json');
    expect(run).toMatchObject({ status: 0, stderr: '' });
    return JSON.parse(run.stdout) as T;
  }

  async function receiver(answer?: (n: number, received: Received) => Answer): Promise<{
    receiver: Receiver;
    url: string;
  }> {
    const created = new Receiver(answer);
    receivers.push(created);
    return { receiver: created, url: await created.start() };
  }

  async function endpoint(workspaceId: string, url: string, ...more: string[]): Promise<Endpoint> {
    return adminJson<Endpoint>(
      'webhook',
      'create',
      '--workspace',
      workspaceId,
      '--url',
      url,
      ...more,
    );
  }

  async function attempts(endpointId: string): Promise<AttemptRow[]> {
    const { rows } = await sql.query<AttemptRow>(
      `SELECT attempt, attempted_at, status, error FROM webhook_attempts
       WHERE endpoint_id = $1 ORDER BY id`,
      [endpointId],
    );
    return rows;
  }

  async function eventState(eventId: string): Promise<string> {
    const { rows } = await sql.query<{ state: string }>(
      'SELECT state FROM webhook_events WHERE id = $1',
      [eventId],
    );
    return rows[0]?.state;
  }

  /** Waits until the endpoint's nth attempt is recorded (its transaction committed). */
  const attemptRecorded = (endpointId: string, n: number) =>
    until(`attempt ${n} of ${endpointId}`, async () => {
      const rows = await attempts(endpointId);
      return rows.length >= n && rows;
    });

  it('delivers every event type, from the import, the delete command and a plain SQL session, signed and with the item as the API returns it', async () => {
    const { workspace, key } = await createTenant(t.prisma);
    const { receiver: r, url } = await receiver();
    const { secret } = await endpoint(workspace.id, url);

    const imported = await admin(
      'import',
      '--workspace',
      workspace.id,
      '--file',
      'docs/examples/import.json',
    );
    expect(imported.status).toBe(0);
    const upserts = ['company.upserted co_acme', 'company.upserted co_globex'];
    await until('the import events', () => r.requests.length >= 5);
    const summary = () => r.events().map((e) => `${e.type} ${String(e.data.id)}`);
    expect(summary().sort()).toEqual(
      [
        ...upserts,
        'company.upserted co_initech',
        'lead.upserted ld_acme_1',
        'lead.upserted ld_globex_1',
      ].sort(),
    );
    // The item exactly as GET /v1/companies/{id} and /v1/leads/{id} return it.
    for (const event of r.events()) {
      const path = event.type.startsWith('company') ? 'companies' : 'leads';
      const read = await getWithKey(t.app, `/v1/${path}/${String(event.data.id)}`, key);
      expect(read.status).toBe(200);
      expect(event.data).toEqual(read.body);
    }

    const deleted = await admin('delete', '--workspace', workspace.id, '--companies', 'co_acme');
    expect(deleted.status).toBe(0);
    await until('the delete events', () => r.requests.length >= 7);
    expect(summary().slice(5).sort()).toEqual([
      'company.deleted co_acme',
      'lead.deleted ld_acme_1',
    ]);
    expect(r.events()[5].data).toEqual({ id: expect.any(String) });

    // Any writer: a session of its own, in SQL. A company's name change moves its leads too.
    await sql.query('BEGIN');
    await sql.query(`UPDATE companies SET name = 'Globex Renamed' WHERE id = 'co_globex'`);
    await sql.query(`DELETE FROM leads WHERE id = 'ld_globex_1'`);
    await sql.query('COMMIT');
    await until('the SQL session events', () => r.requests.length >= 9);
    const fromSql = r.events().slice(7);
    expect(fromSql.map((e) => `${e.type} ${String(e.data.id)}`).sort()).toEqual(
      ['company.upserted co_globex', 'lead.deleted ld_globex_1'].sort(),
    );
    expect(fromSql.find((e) => e.type === 'company.upserted')?.data.name).toBe('Globex Renamed');
    // The lead's upsert for the new name and its deletion, in one transaction: one event, the
    // deletion, its current state.

    for (const received of r.requests) {
      expect(verifyWith(secret, received, t.clock.now())).toEqual(JSON.parse(received.body));
      // The client package's verifier agrees.
      const { headers, body } = received;
      const now = new Date(t.clock.now());
      expect(verifyWebhook(secret, headers, body, { now })).toEqual(JSON.parse(body));
      expect(received.headers['webhook-id']).toBe(JSON.parse(received.body).id);
      expect(received.headers['webhook-id']).toMatch(/^evt_/);
      expect(received.headers['content-type']).toBe('application/json');
      expect(received.headers['user-agent']).toMatch(/webhooks/);
      expect(Number(received.headers['webhook-timestamp'])).toBe(Math.floor(t.clock.now() / 1000));
    }
    // Another secret does not verify.
    const other = `whsec_${randomBytes(32).toString('base64')}`;
    expect(() => verifyWith(other, r.requests[0], t.clock.now())).toThrow();
    const now = new Date(t.clock.now());
    expect(() =>
      verifyWebhook(other, r.requests[0].headers, r.requests[0].body, { now }),
    ).toThrow();
  });

  it("writes an event's item in the service's session settings, whatever the database's defaults", async () => {
    // A database whose sessions round floats by default (extra_float_digits = 0: 15 significant
    // digits). The API's sessions set 1 when they connect; the worker's must too, or a score
    // would read differently in an event and in GET. A fresh worker: new connections.
    const { rows } = await sql.query<{ name: string }>('SELECT current_database() AS name');
    await worker.stop();
    await sql.query(`ALTER DATABASE "${rows[0].name}" SET extra_float_digits = 0`);
    try {
      worker = testWorker(t.database.url, { clock: t.clock, random: () => 0 });
      await worker.start();
      const { workspace, key } = await createTenant(t.prisma);
      const { receiver: r, url } = await receiver();
      await endpoint(workspace.id, url);
      const company = await createCompany(t.prisma, workspace.id, { intentScore: 0.1 + 0.2 });

      await until('the event', () => r.requests.length >= 1);
      expect(r.events()[0].data.intentScore).toBe(0.30000000000000004);
      const read = await getWithKey(t.app, `/v1/companies/${company.id}`, key).expect(200);
      expect(r.events()[0].data).toEqual(read.body);
    } finally {
      await sql.query(`ALTER DATABASE "${rows[0].name}" RESET extra_float_digits`);
      await worker.stop();
      worker = testWorker(t.database.url, { clock: t.clock, random: () => 0 });
      await worker.start();
    }
  });

  it('retries a failing receiver on the schedule, with the same webhook-id, until one success', async () => {
    const { workspace } = await createTenant(t.prisma);
    const failures = 3;
    const { receiver: r, url } = await receiver((n) => (n < failures ? 500 : 200));
    const { id } = await endpoint(workspace.id, url);
    await createCompany(t.prisma, workspace.id);

    await attemptRecorded(id, 1);
    // Due in 5 s on the clock: a millisecond short of it, nothing is sent.
    t.clock.advance(RETRY_DELAYS_MS[0] - 1);
    await sleep(QUIET_MS);
    expect(r.requests).toHaveLength(1);
    t.clock.advance(1);
    for (let n = 2; n <= failures + 1; n++) {
      await attemptRecorded(id, n);
      if (n <= failures) t.clock.advance(RETRY_DELAYS_MS[n - 1]);
    }
    await sleep(QUIET_MS);

    const rows = await attempts(id);
    expect(rows.map((row) => row.status)).toEqual([500, 500, 500, 200]);
    expect(rows.map((row) => row.attempt)).toEqual([1, 2, 3, 4]);
    const gaps = rows
      .slice(1)
      .map((row, i) => row.attempted_at.getTime() - rows[i].attempted_at.getTime());
    expect(gaps).toEqual(RETRY_DELAYS_MS.slice(0, failures));
    expect(r.requests).toHaveLength(failures + 1);
    expect(new Set(r.requests.map((q) => q.headers['webhook-id'])).size).toBe(1);
    expect(await eventState(String(r.requests[0].headers['webhook-id']))).toBe('delivered');

    const deliveries = await adminJson<{ attempt: number; status: number }[]>(
      'webhook',
      'deliveries',
      '--id',
      id,
      '--limit',
      '2',
    );
    expect(deliveries.map((d) => [d.attempt, d.status])).toEqual([
      [4, 200],
      [3, 500],
    ]);
  });

  it('disables the endpoint on a 410 at once; enable delivers what waited, from where it stopped', async () => {
    const { workspace } = await createTenant(t.prisma);
    const { receiver: r, url } = await receiver((n) => (n === 0 ? 410 : 200));
    const { id } = await endpoint(workspace.id, url);
    const first = await createCompany(t.prisma, workspace.id);
    await attemptRecorded(id, 1);

    const [listed] = await adminJson<{ state: string; disabledReason: string }[]>(
      'webhook',
      'list',
      '--workspace',
      workspace.id,
    );
    expect(listed).toMatchObject({
      state: 'disabled',
      disabledReason: expect.stringMatching(/410/),
    });

    const second = await createCompany(t.prisma, workspace.id);
    t.clock.advance(HOUR);
    await sleep(QUIET_MS);
    expect(r.requests).toHaveLength(1);

    await adminJson('webhook', 'enable', '--id', id);
    await until('both companies', () => r.requests.length >= 3);
    await sleep(QUIET_MS);
    const ids = r.events().map((e) => e.data.id);
    expect(ids).toHaveLength(3);
    expect(ids.slice(1).sort()).toEqual([first.id, second.id].sort());
    // The first company's event is the one refused with 410, sent again.
    expect(
      r.requests[1].headers['webhook-id'] === r.requests[0].headers['webhook-id'] ||
        r.requests[2].headers['webhook-id'] === r.requests[0].headers['webhook-id'],
    ).toBe(true);
  });

  it('counts a receiver that does not answer in time as a failed attempt, and retries it', async () => {
    const { workspace } = await createTenant(t.prisma);
    const { receiver: r, url } = await receiver((n) => (n === 0 ? 'hold' : 200));
    const { id } = await endpoint(workspace.id, url);
    await createCompany(t.prisma, workspace.id);

    const [timedOut] = await attemptRecorded(id, 1);
    expect(timedOut).toMatchObject({ status: null, error: expect.stringMatching(/timed out/) });
    t.clock.advance(RETRY_DELAYS_MS[0]);
    const rows = await attemptRecorded(id, 2);
    expect(rows[1].status).toBe(200);
    expect(r.requests[1].headers['webhook-id']).toBe(r.requests[0].headers['webhook-id']);
  });

  it('signs with both secrets for 24 hours after a rotation, then with the new one only', async () => {
    const { workspace } = await createTenant(t.prisma);
    const { receiver: r, url } = await receiver();
    const { id, secret: old } = await endpoint(workspace.id, url);
    const rotation = await adminJson<{ secret: string; previousExpiresAt: string }>(
      'webhook',
      'rotate-secret',
      '--id',
      id,
    );
    const rotated = rotation.secret;
    expect(rotated).not.toBe(old);
    // The admin tool runs on the real clock, the worker here on the test's.
    const expiresAt = Date.parse(rotation.previousExpiresAt);
    expect(Math.abs(expiresAt - (Date.now() + 24 * HOUR))).toBeLessThan(60_000);

    await createCompany(t.prisma, workspace.id);
    await until('a delivery', () => r.requests.length >= 1);
    const during = r.requests[0];
    expect(String(during.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verifyWith(old, during, t.clock.now())).toBeTruthy();
    expect(verifyWith(rotated, during, t.clock.now())).toBeTruthy();

    t.clock.advance(expiresAt - t.clock.now());
    await createCompany(t.prisma, workspace.id);
    await until('a second delivery', () => r.requests.length >= 2);
    const after = r.requests[1];
    expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(verifyWith(rotated, after, t.clock.now())).toBeTruthy();
    expect(() => verifyWith(old, after, t.clock.now())).toThrow();
  });

  it('gives up an event after the whole schedule and records it as failed', async () => {
    const { workspace } = await createTenant(t.prisma);
    const doomed = await createCompany(t.prisma, workspace.id);
    // Fails every attempt of the first company's event, accepts the others: the endpoint keeps
    // succeeding, so only the event is given up.
    const { receiver: r, url } = await receiver((_n, received) =>
      (JSON.parse(received.body) as { data: { id: string } }).data.id === doomed.id ? 500 : 200,
    );
    const { id } = await endpoint(workspace.id, url);
    await t.prisma.company.update({ where: { id: doomed.id }, data: { visitsCount: 99 } });
    await attemptRecorded(id, 1);
    for (let n = 1; n <= RETRY_DELAYS_MS.length; n++) {
      t.clock.advance(RETRY_DELAYS_MS[n - 1]);
      await createCompany(t.prisma, workspace.id);
      await until(`attempt ${n + 1}`, async () => (await attempts(id)).length >= 2 * n + 1);
    }
    await sleep(QUIET_MS);
    const eventId = String(r.requests[0].headers['webhook-id']);
    const tries = r.requests.filter((q) => q.headers['webhook-id'] === eventId);
    expect(tries).toHaveLength(RETRY_DELAYS_MS.length + 1);
    expect(await eventState(eventId)).toBe('failed');
    const [listed] = await adminJson<{ state: string }[]>(
      'webhook',
      'list',
      '--workspace',
      workspace.id,
    );
    expect(listed.state).toBe('enabled');
  });

  it('disables an endpoint whose every attempt failed for three days', async () => {
    const { workspace } = await createTenant(t.prisma);
    const { receiver: r, url } = await receiver(() => 503);
    const { id } = await endpoint(workspace.id, url);
    await createCompany(t.prisma, workspace.id);
    await attemptRecorded(id, 1);
    const started = t.clock.now();
    // A new failing event every 12 hours, each retried on its schedule: the endpoint is disabled
    // at the first failure three days after the first.
    let n = 1;
    while (t.clock.now() - started < 3 * 24 * HOUR) {
      t.clock.advance(12 * HOUR);
      await createCompany(t.prisma, workspace.id);
      await until('an attempt', async () => (await attempts(id)).length > n);
      n = (await attempts(id)).length;
    }
    await sleep(QUIET_MS);
    const [listed] = await adminJson<{ state: string; disabledReason: string }[]>(
      'webhook',
      'list',
      '--workspace',
      workspace.id,
    );
    expect(listed).toMatchObject({
      state: 'disabled',
      disabledReason: expect.stringMatching(/every attempt failed for 3 days/),
    });
    const count = r.requests.length;
    t.clock.advance(HOUR);
    await createCompany(t.prisma, workspace.id);
    await sleep(QUIET_MS);
    expect(r.requests).toHaveLength(count);
  });

  it('shares the work between two workers: each change once, no event sent twice at once', async () => {
    const second = testWorker(t.database.url, { clock: t.clock, random: () => 0 });
    await second.start();
    const boss = new PgBoss({
      connectionString: t.database.url,
      supervise: false,
      schedule: false,
    });
    await boss.start();
    try {
      const { workspace } = await createTenant(t.prisma);
      // Slow enough that two sends of one event would overlap.
      const { receiver: r, url } = await receiver(() => 200);
      const slow = async () => {
        await sleep(200);
        return 200;
      };
      r.setAnswer(slow);
      const { id } = await endpoint(workspace.id, url);
      const companies = 60;
      await sql.query(
        `INSERT INTO companies (id, workspace_id, name, domain, industry, size, country, city,
           revenue, intent_score, intent_level, icp_score, commercial_score, crm_status,
           visits_count, first_seen, last_seen)
         SELECT $1 || '_' || n, $1, 'Company ' || n, 'c' || n || '.example', 'Software', '1-10',
           'France', 'Lyon', '1M', 50, 'warm', 50, 50, 'new', 1, now(), now()
         FROM generate_series(1, $2) n`,
        [workspace.id, companies],
      );
      await until('every company', () => r.requests.length >= companies);
      await until('every delivery recorded', async () => {
        const { rows } = await sql.query<{ delivered: number }>(
          `SELECT count(*)::int AS delivered FROM webhook_events
           WHERE endpoint_id = $1 AND state = 'delivered'`,
          [id],
        );
        return rows[0].delivered === companies;
      });
      // Every event a second job besides its own: both workers hold jobs of the same events.
      const { rows } = await sql.query<{ id: string }>(
        'SELECT id FROM webhook_events WHERE endpoint_id = $1',
        [id],
      );
      await sql.query(`UPDATE webhook_events SET state = 'pending' WHERE endpoint_id = $1`, [id]);
      for (let copy = 0; copy < 2; copy++) {
        await boss.insert(rows.map((row) => ({ name: DELIVERY_QUEUE, data: { eventId: row.id } })));
      }
      await until('the second round', () => r.requests.length >= 2 * companies);
      await sleep(QUIET_MS);

      const perId = new Map<string, number>();
      for (const q of r.requests) {
        const eventId = String(q.headers['webhook-id']);
        perId.set(eventId, (perId.get(eventId) ?? 0) + 1);
      }
      expect(new Set(r.events().map((e) => e.data.id)).size).toBe(companies);
      expect(perId.size).toBe(companies);
      // Each event: once from the dispatch, once more from its two extra jobs together.
      expect([...perId.values()].every((count) => count === 2)).toBe(true);
      expect(r.maxConcurrentPerId).toBe(1);
    } finally {
      await boss.stop({ graceful: false, close: true });
      await second.stop();
    }
  });
});

describe('webhooks the worker refuses to send, and what the operator sees of them', () => {
  let t: TestApp;
  let worker: WebhookWorker;
  const lines: { level: number; msg: string; endpointId?: string; host?: string }[] = [];
  const written: string[] = [];

  beforeAll(async () => {
    t = await createTestApp();
    // As in production: no address inside, a log the test reads.
    const destination = {
      write: (line: string) => {
        written.push(line);
        lines.push(JSON.parse(line) as (typeof lines)[number]);
      },
    };
    worker = testWorker(t.database.url, {
      clock: t.clock,
      allowPrivateNetworks: false,
      logger: pino({ level: 'info' }, destination),
    });
    await worker.start();
  });

  afterAll(async () => {
    await worker?.stop();
    await t?.close();
  });

  const admin = (...argv: string[]) =>
    runAdminCommand({ DATABASE_URL: t.database.url, ...WEBHOOK_ENV }, ...argv);

  it('logs a refused address once per endpoint at warn, without the secret; deliveries shows each attempt on one line with the answer', async () => {
    const { workspace } = await createTenant(t.prisma);
    const created = await admin(
      'webhook',
      'create',
      '--workspace',
      workspace.id,
      '--url',
      'http://127.0.0.1:9/hooks?token=receiver-token',
      '--json',
    );
    const { id, secret } = JSON.parse(created.stdout) as Endpoint;
    await createCompany(t.prisma, workspace.id);
    await createCompany(t.prisma, workspace.id);
    await until('two refused attempts', async () => {
      const count = await t.prisma.webhookAttempt.count({ where: { endpointId: id } });
      return count >= 2;
    });

    const warnings = lines.filter((line) => line.endpointId === id);
    expect(warnings).toEqual([
      expect.objectContaining({
        level: 40,
        host: '127.0.0.1:9',
        msg: expect.stringMatching(/^webhook attempt not made: refused address 127\.0\.0\.1: /),
      }),
    ]);
    expect(written.join('')).not.toContain(secret.slice('whsec_'.length));
    expect(written.join('')).not.toContain('receiver-token');

    // A receiver's multi-line answer and a multi-line error (OpenSSL writes some) beside them.
    const [{ eventId }] = await t.prisma.webhookAttempt.findMany({ where: { endpointId: id } });
    await t.prisma.webhookAttempt.create({
      data: {
        eventId,
        endpointId: id,
        attempt: 9,
        attemptedAt: new Date(),
        status: 500,
        durationMs: 12,
        responseExcerpt: '{"error":\n  "database down"\r\n}',
      },
    });
    await t.prisma.webhookAttempt.create({
      data: {
        eventId,
        endpointId: id,
        attempt: 10,
        attemptedAt: new Date(),
        error: 'certificate verify failed\nerror:0A000086:SSL routines::certificate verify failed',
        durationMs: 3,
        responseExcerpt: '',
      },
    });
    const listed = await admin('webhook', 'deliveries', '--id', id);
    const rows = listed.stdout.trimEnd().split('\n');
    expect(rows).toHaveLength(1 + 4);
    expect(rows[0]).toMatch(/RESULT .* RESPONSE$/);
    expect(rows[1]).toMatch(/ certificate verify failed error:0A000086:SSL routines::cert… /);
    expect(rows[2]).toMatch(/ 500 .*\{"error": "database down" \}$/);
    expect(rows[3]).toMatch(/refused address 127\.0\.0\.1: /);
  });
});

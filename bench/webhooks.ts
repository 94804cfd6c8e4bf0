import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'pg';
import { cpuSeconds } from './compression';
import { shippedNodeFlags } from '../test/support/node-flags';
import { ROOT } from './run-settings';
import { residentMb } from './servers';
import { sealSecret } from '../src/webhooks/secret-box';
import { newSigningSecret } from '../src/webhooks/signing-secret';
import { EVENT_TYPES } from '../src/webhooks/webhook-events';
import { createEndpoint } from '../src/webhooks/sql/endpoints.sql';

/** (w) Webhook dispatch under the API's load: what the worker delivers, and how soon. */
export interface WebhookRun {
  /** Changes committed per second by the writer (one company each), and for how long. */
  targetRate: number;
  seconds: number;
  events: number;
  /** Events delivered per second, from the first commit to the last delivery. */
  deliveredPerSecond: number;
  /** Milliseconds from the writing transaction's commit to the receiver's arrival. */
  p50: number;
  p99: number;
  max: number;
  /** A backlog committed at once: its size and how fast the worker drained it. */
  backlog: number;
  backlogPerSecond: number;
  /**
   * The worker process's CPU time per event of the steady part: what it costs whatever the
   * machine's load (1,000 / this is the events a second one free core could deliver).
   */
  workerCpuMsPerEvent: number;
  /** The worker's node flags, and its peak resident memory over the whole run, MB. */
  workerFlags: string[];
  workerPeakRssMb: number;
  /** The API's workload (a) meanwhile. */
  apiRps: number;
  apiP99: number;
  /**
   * Another workspace's endpoint that never answers, with HANGING_EVENTS events, while this
   * endpoint gets HEALTHY_RATE changes a second: this endpoint's commit-to-delivery lag.
   */
  hanging: { events: number; healthyRate: number; healthyEvents: number; p50: number; p99: number };
}

const HANGING_WORKSPACE = 'bench_webhooks_hanging';
const HANGING_EVENTS = 300;
const HEALTHY_RATE = 30;

const WORKSPACE = 'bench_webhooks';
const BATCHES_PER_SECOND = 10;

/**
 * The built worker (`dist/worker/main.js`) against a fast receiver in this process, while
 * `serve(seconds)` loads the API: a writer commits `targetRate` companies a second (one
 * transaction per tenth of a second) for `seconds`, then a backlog at once; each company's event
 * is timed from its commit to its arrival.
 */
export async function measureWebhooks(options: {
  databaseUrl: string;
  workerMain: string;
  targetRate: number;
  seconds: number;
  backlog: number;
  serve: (seconds: number) => Promise<{ rps: number; p99: number }>;
  log: (line: string) => void;
}): Promise<WebhookRun> {
  const arrivals = new Map<string, number>();
  // Holds every request until the worker gives up on it (its timeout, 15 s).
  const hangingReceiver = createServer((request) => void request.resume());
  await new Promise<void>((resolve) => hangingReceiver.listen(0, '127.0.0.1', resolve));
  const hangingUrl = `http://127.0.0.1:${(hangingReceiver.address() as AddressInfo).port}/hooks`;
  const receiver = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      const id = (JSON.parse(body) as { data: { id: string } }).data.id;
      if (!arrivals.has(id)) arrivals.set(id, performance.timeOrigin + performance.now());
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  const key = randomBytes(32);
  const client = new Client({ connectionString: options.databaseUrl });
  await client.connect();
  // BENCH_WORKER_NODE_FLAGS replaces the shipped ones (to compare heap settings).
  const workerFlags =
    process.env.BENCH_WORKER_NODE_FLAGS?.split(/\s+/).filter(Boolean) ??
    shippedNodeFlags('worker', ROOT);
  const worker = spawn(process.execPath, [...workerFlags, options.workerMain], {
    env: {
      PATH: process.env.PATH,
      DATABASE_URL: options.databaseUrl,
      API_KEY_SECRET: randomBytes(32).toString('hex'),
      WEBHOOK_SECRET_KEY: key.toString('hex'),
      WEBHOOK_ALLOW_HTTP: 'true',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  let workerPeakRssMb = 0;
  const sampler = setInterval(
    () => (workerPeakRssMb = Math.max(workerPeakRssMb, residentMb(worker.pid))),
    50,
  );
  try {
    await client.query(
      `INSERT INTO workspaces (id, name, plan, updated_at) VALUES ($1, 'Webhooks', 'growth', now())
       ON CONFLICT (id) DO NOTHING`,
      [WORKSPACE],
    );
    await client.query(
      `INSERT INTO workspaces (id, name, plan, updated_at) VALUES ($1, 'Hanging', 'growth', now())
       ON CONFLICT (id) DO NOTHING`,
      [HANGING_WORKSPACE],
    );
    for (const workspace of [WORKSPACE, HANGING_WORKSPACE]) {
      await client.query(`DELETE FROM companies WHERE workspace_id = $1`, [workspace]);
      await client.query(`DELETE FROM webhook_endpoints WHERE workspace_id = $1`, [workspace]);
    }
    const addEndpoint = async (workspaceId: string, endpointUrl: string) => {
      const id = `whe_bench_${randomBytes(4).toString('hex')}`;
      const endpoint = { id, workspaceId, url: endpointUrl, eventTypes: [...EVENT_TYPES] };
      await createEndpoint(client, endpoint, sealSecret(key, id, newSigningSecret()), new Date());
    };
    await addEndpoint(WORKSPACE, url);
    // The worker is up once it has created pg-boss's schema and queue.
    await sleep(3_000);

    const commits = new Map<string, number>();
    let next = 0;
    const insert = async (count: number) => {
      const first = next;
      next += count;
      await client.query('BEGIN');
      await client.query(
        `INSERT INTO companies (id, workspace_id, name, domain, industry, size, country, city,
           revenue, intent_score, intent_level, icp_score, commercial_score, crm_status,
           visits_count, first_seen, last_seen)
         SELECT 'cow_' || n, $1, 'Company ' || n, 'c' || n || '.example', 'Software', '1-10',
           'France', 'Lyon', '1M', 50, 'warm', 50, 50, 'new', 1, now(), now()
         FROM generate_series($2::int, $3::int) n`,
        [WORKSPACE, first, next - 1],
      );
      await client.query('COMMIT');
      const at = performance.timeOrigin + performance.now();
      for (let n = first; n < next; n++) commits.set(`cow_${n}`, at);
    };

    const cpuBefore = cpuSeconds(worker.pid);
    const perBatch = Math.round(options.targetRate / BATCHES_PER_SECOND);
    const writing = (async () => {
      const start = performance.now();
      for (let batch = 0; batch < options.seconds * BATCHES_PER_SECOND; batch++) {
        const due = start + (batch * 1000) / BATCHES_PER_SECOND;
        await sleep(Math.max(0, due - performance.now()));
        await insert(perBatch);
      }
    })();
    const [api] = await Promise.all([options.serve(options.seconds), writing]);
    await waitForAll(commits, arrivals);
    const workerCpuMs = (cpuSeconds(worker.pid) - cpuBefore) * 1000;
    const steady = [...commits.keys()];
    const latencies = steady.map((c) => arrivals.get(c)! - commits.get(c)!).sort((a, b) => a - b);
    const firstCommit = Math.min(...steady.map((c) => commits.get(c)!));
    const lastArrival = Math.max(...steady.map((c) => arrivals.get(c)!));
    options.log(`webhooks: ${steady.length} events at ${options.targetRate}/s delivered`);

    const backlogStart = performance.timeOrigin + performance.now();
    const before = new Set(commits.keys());
    await insert(options.backlog);
    await waitForAll(commits, arrivals);
    const backlogIds = [...commits.keys()].filter((c) => !before.has(c));
    const backlogEnd = Math.max(...backlogIds.map((c) => arrivals.get(c)!));
    const at = (q: number) =>
      latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];

    // One endpoint hangs on HANGING_EVENTS events; this one gets HEALTHY_RATE a second meanwhile.
    await addEndpoint(HANGING_WORKSPACE, hangingUrl);
    await client.query(
      `INSERT INTO companies (id, workspace_id, name, domain, industry, size, country, city,
         revenue, intent_score, intent_level, icp_score, commercial_score, crm_status,
         visits_count, first_seen, last_seen)
       SELECT 'coh_' || n, $1, 'Company ' || n, 'c' || n || '.example', 'Software', '1-10',
         'France', 'Lyon', '1M', 50, 'warm', 50, 50, 'new', 1, now(), now()
       FROM generate_series(1, $2::int) n`,
      [HANGING_WORKSPACE, HANGING_EVENTS],
    );
    await sleep(1_000);
    const beforeHanging = new Set(commits.keys());
    const start = performance.now();
    for (let n = 0; n < options.seconds * HEALTHY_RATE; n++) {
      await sleep(Math.max(0, start + (n * 1000) / HEALTHY_RATE - performance.now()));
      await insert(1);
    }
    await waitForAll(commits, arrivals);
    const healthyIds = [...commits.keys()].filter((c) => !beforeHanging.has(c));
    const healthyLags = healthyIds
      .map((c) => arrivals.get(c)! - commits.get(c)!)
      .sort((a, b) => a - b);
    const lagAt = (q: number) =>
      healthyLags[Math.min(healthyLags.length - 1, Math.floor(q * healthyLags.length))];
    options.log(
      `webhooks: healthy endpoint beside a hanging one: p50 ${lagAt(0.5).toFixed(0)} ms, ` +
        `p99 ${lagAt(0.99).toFixed(0)} ms over ${healthyIds.length} events`,
    );
    return {
      targetRate: options.targetRate,
      seconds: options.seconds,
      events: steady.length,
      deliveredPerSecond: steady.length / ((lastArrival - firstCommit) / 1000),
      p50: at(0.5),
      p99: at(0.99),
      max: latencies[latencies.length - 1],
      backlog: options.backlog,
      backlogPerSecond: options.backlog / ((backlogEnd - backlogStart) / 1000),
      workerCpuMsPerEvent: workerCpuMs / steady.length,
      workerFlags,
      workerPeakRssMb,
      apiRps: api.rps,
      apiP99: api.p99,
      hanging: {
        events: HANGING_EVENTS,
        healthyRate: HEALTHY_RATE,
        healthyEvents: healthyIds.length,
        p50: lagAt(0.5),
        p99: lagAt(0.99),
      },
    };
  } finally {
    clearInterval(sampler);
    worker.kill('SIGTERM');
    await new Promise((resolve) => worker.once('exit', resolve));
    for (const workspace of [WORKSPACE, HANGING_WORKSPACE]) {
      await client.query(`DELETE FROM webhook_endpoints WHERE workspace_id = $1`, [workspace]);
      await client.query(`DELETE FROM companies WHERE workspace_id = $1`, [workspace]);
    }
    await client.end();
    hangingReceiver.closeAllConnections();
    await new Promise((resolve) => hangingReceiver.close(resolve));
    await new Promise((resolve) => receiver.close(resolve));
  }
}

async function waitForAll(commits: Map<string, number>, arrivals: Map<string, number>) {
  const deadline = Date.now() + 120_000;
  while ([...commits.keys()].some((id) => !arrivals.has(id))) {
    if (Date.now() > deadline) {
      const missing = [...commits.keys()].filter((id) => !arrivals.has(id)).length;
      throw new Error(`webhooks: ${missing} events not delivered within 2 minutes`);
    }
    await sleep(50);
  }
}

export function renderWebhooks(run: WebhookRun): string[] {
  const ms = (value: number) => `${value.toFixed(0)} ms`;
  return [
    '### (w) webhook dispatch while the API serves workload (a)',
    '',
    `A writer commits ${run.targetRate} companies a second (a transaction every 100 ms) for ` +
      `${run.seconds} s; the built worker delivers each company.upserted event to a receiver ` +
      `answering 204 at once, on this machine; workload (a) runs against the service meanwhile. ` +
      `Then ${run.backlog} changes are committed at once and drained.`,
    '',
    '| events | delivered/s | commit→delivery p50 | p99 | max | backlog drained/s | worker CPU/event | API (a) req/s | API p99 |',
    '|---|---|---|---|---|---|---|---|---|',
    `| ${run.events} | ${run.deliveredPerSecond.toFixed(0)} | ${ms(run.p50)} | ${ms(run.p99)} | ` +
      `${ms(run.max)} | ${run.backlogPerSecond.toFixed(0)} | ${run.workerCpuMsPerEvent.toFixed(2)} ms | ` +
      `${run.apiRps.toFixed(0)} | ` +
      `${run.apiP99.toFixed(1)} ms |`,
    '',
    `With another workspace's endpoint hanging on ${run.hanging.events} events (its receiver ` +
      `never answers; each attempt waits the 15 s timeout), this endpoint received ` +
      `${run.hanging.healthyEvents} events at ${run.hanging.healthyRate} a second: commit→delivery ` +
      `p50 ${ms(run.hanging.p50)}, p99 ${ms(run.hanging.p99)}.`,
    '',
    `The worker ran with \`${run.workerFlags.join(' ')}\`; its peak resident memory over the ` +
      `whole run: ${run.workerPeakRssMb.toFixed(0)} MB.`,
  ];
}

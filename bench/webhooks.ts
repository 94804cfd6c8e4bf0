import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'pg';
import { cpuSeconds } from './compression';
import { shippedNodeFlags } from '../test/support/node-flags';
import { ROOT } from './run-settings';
import { residentMb } from './servers';
import { sealSecret } from '../src/webhooks/secret-box';
import { newSigningSecret } from '../src/webhooks/signing-secret';
import { DEFAULT_EVENT_TYPES } from '../src/webhooks/webhook-events';
import { createEndpoint } from '../src/webhooks/sql/endpoints.sql';
import type { Target } from './targets';

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

export const WEBHOOK_TARGETS: Target<WebhookRun>[] = [
  {
    says: 'sustained webhook dispatch >= 500 events/s (600 a second offered)',
    figure: (run) => run.deliveredPerSecond,
    atLeast: 500,
    unit: 'events/s',
  },
  { says: 'commit to delivery p99 <= 2 s', figure: (run) => run.p99, atMost: 2000, unit: 'ms' },
  {
    says: 'healthy endpoint p99 beside a hanging one <= 2 s',
    figure: (run) => run.hanging.p99,
    atMost: 2000,
    unit: 'ms',
  },
];

const HANGING_WORKSPACE = 'bench_webhooks_hanging';
const HANGING_EVENTS = 300;
const HEALTHY_RATE = 30;

const WORKSPACE = 'bench_webhooks';
const BATCHES_PER_SECOND = 10;

export interface WebhookOptions {
  databaseUrl: string;
  workerMain: string;
  targetRate: number;
  seconds: number;
  backlog: number;
  serve: (seconds: number) => Promise<{ rps: number; p99: number }>;
  log: (line: string) => void;
}

/**
 * The built worker (`dist/worker/main.js`) against a fast receiver in this process, while
 * `serve(seconds)` loads the API: a writer commits `targetRate` companies a second (one
 * transaction per tenth of a second) for `seconds`, then a backlog at once; each company's event
 * is timed from its commit to its arrival. Then an endpoint beside another workspace's that
 * never answers.
 */
export async function measureWebhooks(options: WebhookOptions): Promise<WebhookRun> {
  const receivers = await startReceivers();
  const key = randomBytes(32);
  const client = new Client({ connectionString: options.databaseUrl });
  await client.connect();
  const worker = startWorker(options, key);
  try {
    for (const [workspace, name] of [
      [WORKSPACE, 'Webhooks'],
      [HANGING_WORKSPACE, 'Hanging'],
    ]) {
      await client.query(
        `INSERT INTO workspaces (id, name, plan, updated_at) VALUES ($1, $2, 'growth', now())
         ON CONFLICT (id) DO NOTHING`,
        [workspace, name],
      );
      // What a run before left.
      await client.query(`DELETE FROM companies WHERE workspace_id = $1`, [workspace]);
      await client.query(`DELETE FROM webhook_endpoints WHERE workspace_id = $1`, [workspace]);
    }
    await addEndpoint(client, key, WORKSPACE, receivers.url);
    // The worker is up once it has created pg-boss's schema and queue.
    await sleep(3_000);
    const writer = companyWriter(client, receivers.arrivals);
    const steady = await measureSteady(options, writer, worker);
    const backlog = await writer.timed(() => writer.insert(options.backlog));
    // One endpoint hangs on HANGING_EVENTS events; this one gets HEALTHY_RATE a second meanwhile.
    await addEndpoint(client, key, HANGING_WORKSPACE, receivers.hangingUrl);
    await insertCompanies(client, HANGING_WORKSPACE, 'coh_', 1, HANGING_EVENTS);
    await sleep(1_000);
    const healthy = await writer.timed(async () => {
      const start = performance.now();
      for (let n = 0; n < options.seconds * HEALTHY_RATE; n++) {
        await sleep(Math.max(0, start + (n * 1000) / HEALTHY_RATE - performance.now()));
        await writer.insert(1);
      }
    });
    options.log(
      `webhooks: healthy endpoint beside a hanging one: p50 ${at(healthy.lags, 0.5).toFixed(0)} ` +
        `ms, p99 ${at(healthy.lags, 0.99).toFixed(0)} ms over ${healthy.lags.length} events`,
    );
    return {
      ...steady,
      targetRate: options.targetRate,
      seconds: options.seconds,
      backlog: options.backlog,
      backlogPerSecond: options.backlog / (backlog.seconds - backlog.startedSeconds),
      workerFlags: worker.flags,
      workerPeakRssMb: worker.peakRssMb(),
      hanging: {
        events: HANGING_EVENTS,
        healthyRate: HEALTHY_RATE,
        healthyEvents: healthy.lags.length,
        p50: at(healthy.lags, 0.5),
        p99: at(healthy.lags, 0.99),
      },
    };
  } finally {
    await worker.stop();
    for (const workspace of [WORKSPACE, HANGING_WORKSPACE]) {
      await removeWorkspaceData(client, workspace);
    }
    await client.end();
    await receivers.close();
  }
}

/** The value at quantile `q` of sorted values. */
const at = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];

/**
 * The receivers, in this process: one that answers 204 at once and records each company's first
 * arrival (epoch ms), and one that holds every request until the worker gives up on it (its
 * timeout, 15 s).
 */
async function startReceivers() {
  const arrivals = new Map<string, number>();
  const receiver = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      const id = (JSON.parse(body) as { data: { id: string } }).data.id;
      if (!arrivals.has(id)) arrivals.set(id, performance.timeOrigin + performance.now());
      response.writeHead(204).end();
    });
  });
  const hanging = createServer((request) => void request.resume());
  const urlOf = async (server: Server) => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  };
  return {
    arrivals,
    url: await urlOf(receiver),
    hangingUrl: await urlOf(hanging),
    close: async () => {
      hanging.closeAllConnections();
      await new Promise((resolve) => hanging.close(resolve));
      await new Promise((resolve) => receiver.close(resolve));
    },
  };
}

/** The built worker, with its node flags, its peak resident memory sampled every 50 ms. */
function startWorker(options: WebhookOptions, key: Buffer) {
  // BENCH_WORKER_NODE_FLAGS replaces the shipped ones (to compare heap settings).
  const flags =
    process.env.BENCH_WORKER_NODE_FLAGS?.split(/\s+/).filter(Boolean) ??
    shippedNodeFlags('worker', ROOT);
  const worker = spawn(process.execPath, [...flags, options.workerMain], {
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
  let peakRssMb = 0;
  const sampler = setInterval(() => (peakRssMb = Math.max(peakRssMb, residentMb(worker.pid))), 50);
  return {
    flags,
    peakRssMb: () => peakRssMb,
    cpuSeconds: () => cpuSeconds(worker.pid),
    stop: async () => {
      clearInterval(sampler);
      worker.kill('SIGTERM');
      await new Promise((resolve) => worker.once('exit', resolve));
    },
  };
}

type Worker = ReturnType<typeof startWorker>;

async function addEndpoint(client: Client, key: Buffer, workspaceId: string, url: string) {
  const id = `whe_bench_${randomBytes(4).toString('hex')}`;
  const endpoint = { id, workspaceId, url, eventTypes: [...DEFAULT_EVENT_TYPES], pages: null };
  await createEndpoint(client, endpoint, sealSecret(key, id, newSigningSecret()), new Date());
}

/** A workspace's endpoints, then its companies (whose deletions then reach no endpoint). */
async function removeWorkspaceData(client: Client, workspace: string): Promise<void> {
  await client.query(`DELETE FROM webhook_endpoints WHERE workspace_id = $1`, [workspace]);
  await client.query(`DELETE FROM companies WHERE workspace_id = $1`, [workspace]);
}

/** Companies `prefix` + first..last of a workspace, in one statement. */
async function insertCompanies(
  client: Client,
  workspace: string,
  prefix: string,
  first: number,
  last: number,
): Promise<void> {
  await client.query(
    `INSERT INTO companies (id, workspace_id, name, domain, industry, size, country, city,
       revenue, intent_score, intent_level, icp_score, commercial_score, crm_status,
       visits_count, first_seen, last_seen)
     SELECT $2::text || n, $1, 'Company ' || n, 'c' || n || '.example', 'Software', '1-10',
       'France', 'Lyon', '1M', 50, 'warm', 50, 50, 'new', 1, now(), now()
     FROM generate_series($3::int, $4::int) n`,
    [workspace, prefix, first, last],
  );
}

/**
 * The writer of the measured workspace's companies, one transaction per call, each company's
 * commit time recorded; `timed` runs writes and waits until all their events have arrived.
 */
function companyWriter(client: Client, arrivals: Map<string, number>) {
  const commits = new Map<string, number>();
  let next = 0;
  const insert = async (count: number) => {
    const first = next;
    next += count;
    await client.query('BEGIN');
    await insertCompanies(client, WORKSPACE, 'cow_', first, next - 1);
    await client.query('COMMIT');
    const committed = performance.timeOrigin + performance.now();
    for (let n = first; n < next; n++) commits.set(`cow_${n}`, committed);
  };
  /** The lags (commit to arrival, sorted, ms) of what `write` committed, and when it ran. */
  const timed = async (write: () => Promise<void>) => {
    const before = new Set(commits.keys());
    const startedSeconds = (performance.timeOrigin + performance.now()) / 1000;
    await write();
    await waitForAll(commits, arrivals);
    const ids = [...commits.keys()].filter((id) => !before.has(id));
    const lags = ids.map((id) => arrivals.get(id)! - commits.get(id)!).sort((a, b) => a - b);
    const firstCommit = Math.min(...ids.map((id) => commits.get(id)!));
    const lastArrival = Math.max(...ids.map((id) => arrivals.get(id)!));
    return { lags, startedSeconds, firstCommit, seconds: lastArrival / 1000 };
  };
  return { insert, timed };
}

/**
 * `targetRate` companies a second for `seconds`, in BATCHES_PER_SECOND transactions a second,
 * while the API serves its load: what was delivered, how soon, and the worker's CPU per event.
 */
async function measureSteady(
  options: WebhookOptions,
  writer: ReturnType<typeof companyWriter>,
  worker: Worker,
) {
  const cpuBefore = worker.cpuSeconds();
  const perBatch = Math.round(options.targetRate / BATCHES_PER_SECOND);
  let api = { rps: NaN, p99: NaN };
  const steady = await writer.timed(async () => {
    const writing = (async () => {
      const start = performance.now();
      for (let batch = 0; batch < options.seconds * BATCHES_PER_SECOND; batch++) {
        const due = start + (batch * 1000) / BATCHES_PER_SECOND;
        await sleep(Math.max(0, due - performance.now()));
        await writer.insert(perBatch);
      }
    })();
    [api] = await Promise.all([options.serve(options.seconds), writing]);
  });
  const workerCpuMs = (worker.cpuSeconds() - cpuBefore) * 1000;
  const { lags } = steady;
  options.log(`webhooks: ${lags.length} events at ${options.targetRate}/s delivered`);
  return {
    events: lags.length,
    deliveredPerSecond: lags.length / (steady.seconds - steady.firstCommit / 1000),
    p50: at(lags, 0.5),
    p99: at(lags, 0.99),
    max: lags[lags.length - 1],
    workerCpuMsPerEvent: workerCpuMs / lags.length,
    apiRps: api.rps,
    apiP99: api.p99,
  };
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

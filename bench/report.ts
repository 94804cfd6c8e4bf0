import type { BenchScale } from './data';
import { renderCompression, type CompressionLevels } from './compression';
import type { ImportRuns, SyncPass } from './feeds';
import { renderWebhooks, type WebhookRun } from './webhooks';
import type { FairQueueCost } from './fair-queue-cost';
import { type ChangeStreamRun, STREAM_FIELDS } from './change-stream';
import type { ManyTenantsRun } from './many-tenants';
import type { CpuPerPage, NoisyNeighbourRun, QuietReads } from './noisy-neighbour';
import type { RefusalCost } from './refusal-cost';

/**
 * `metrics`: the service with METRICS_PORT set; `*-older-node`: the service and the bare server on
 * the older supported Node; `*-alone`: Express, and NestJS on Express, answering (z)'s probe and
 * routing (a), (e) and (f) to the bare server's handler (each measured on a few workloads only).
 */
export type ServerName =
  | 'service'
  | 'bare'
  | 'naive'
  | 'metrics'
  | 'service-older-node'
  | 'bare-older-node'
  | 'express-alone'
  | 'nest-alone';

export interface Measurement {
  server: ServerName | 'pgbench';
  workload: string;
  rps: number;
  /** Milliseconds, over every response of the measured period. */
  p50: number;
  p99: number;
  /** Responses other than 200, errors and timeouts. */
  failures: number;
  /** Peak resident memory of the server process during the workload (NaN for pgbench). */
  peakRssMb: number;
  /** The server process's CPU time per response, and bytes received per response (not pgbench). */
  cpuMsPerRequest?: number;
  bytesPerResponse?: number;
}

export interface Report {
  smoke: boolean;
  scale: BenchScale;
  seconds: number;
  connections: number;
  /** Seconds the data took to generate, undefined when reused. */
  generation: number | undefined;
  machine: { cpu: string; memoryGb: number; postgres: string; date: string };
  /** The Node versions the servers ran on, and the service's node flags. */
  node: { shipped: string; older: string; serviceFlags: string[] };
  startup: Partial<Record<ServerName, number>>;
  workloads: { id: string; title: string }[];
  measurements: Measurement[];
  ceiling: Measurement[];
  /** (h) the full sync of the large workspace, through the feed and by offsets. */
  sync?: { feedLimit: number; offsetLimit: number; feed: SyncPass; offset: SyncPass };
  /** (s) the change stream's full sync, beside COPY and a quiet workspace. */
  changeStream?: ChangeStreamRun;
  /** (i) imports with change tracking on and off, and the no-op re-import. */
  imports?: ImportRuns;
  /** Each level of gzip and brotli on one page (with workload b-br). */
  compressionLevels?: CompressionLevels;
  /** (w) webhook dispatch while the API serves workload (a). */
  webhooks?: WebhookRun;
  /** (n) one workspace bursting beside a quiet one. */
  noisyNeighbour?: NoisyNeighbourRun;
  manyTenants?: ManyTenantsRun;
  refusalCost?: RefusalCost;
  /** (q) the fair queue's CPU per statement. */
  fairQueueCost?: FairQueueCost;
}

const SERVER_TITLES: Record<string, string> = {
  metrics: 'service, METRICS_PORT set',
  'service-older-node': 'service, older Node',
  'bare-older-node': 'bare, older Node',
  'express-alone': 'Express alone',
  'nest-alone': 'NestJS on Express alone',
  pgbench: 'pgbench (database alone)',
};

/** The workloads of one page of the companies feed each (the g target compares their p50s). */
const FEED_PAGES = ['g1', 'g2', 'g3'];

const number = (value: number, digits = 0) =>
  Number.isFinite(value) ? value.toFixed(digits) : '–';
const ratio = (value: number) => (Number.isFinite(value) ? `${value.toFixed(2)}x` : '–');
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

/** The generated part of docs/benchmarks.md: settings, tables per workload, and the targets. */
export function renderReport(report: Report): string {
  const find = (server: string, workload: string) =>
    [...report.measurements, ...report.ceiling].find(
      (m) => m.server === server && m.workload === workload,
    );
  const lines: string[] = [];
  const { scale } = report;
  lines.push(
    `Run of ${report.machine.date}${report.smoke ? ' (smoke mode: small data, not a measurement)' : ''}.`,
    '',
    `- Machine: ${report.machine.cpu}, ${report.machine.memoryGb} GiB; ${report.machine.postgres}.`,
    `- Node: every server and the load on Node ${report.node.shipped} (the image's), the ` +
      `service with \`${report.node.serviceFlags.join(' ')}\`; the service and the bare server ` +
      `also on Node ${report.node.older} where a table shows "older Node".`,
    `- Data: one workspace of ${scale.largeCompanies.toLocaleString('en')} companies ` +
      `(${scale.contactsPerCompany} contacts each) and ${scale.largeLeads.toLocaleString('en')} leads, ` +
      `plus ${scale.smallWorkspaces} workspaces of ${scale.smallCompanies.toLocaleString('en')} companies ` +
      `and ${scale.smallLeads.toLocaleString('en')} leads` +
      (report.generation === undefined
        ? ' (reused from a previous run).'
        : `, generated in ${number(report.generation)} s.`),
    `- Load: autocannon, ${report.connections} connections (c1 and the feed pages g1–g3: one), ` +
      'per workload the servers in the order ' +
      `${report.smoke ? 'each once' : 'service, metrics, bare, service and bare on the older Node (on (a), (e) and (z) only) with naive and the frameworks alone (on (a), (e), (f) and (z)) between them, bare, metrics, service'} ` +
      '(metrics: the service with METRICS_PORT set, on (e) and (z) only; the feed ' +
      'pages without the naive server, which has no feed of its own), each period ' +
      `${report.seconds} s after a warm-up; requests drawn at random from the workload; p50 ` +
      `and p99 over every response. pgbench: the same statements, as many clients.`,
    `- Start-up to ready: ${(['service', 'bare', 'naive'] as const)
      .map((s) => `${s} ${number(report.startup[s] ?? NaN)} ms`)
      .join(', ')}.`,
    '',
  );
  for (const { id, title } of report.workloads) {
    lines.push(`### (${id}) ${title}`, '');
    lines.push(
      '| server | req/s | p50 ms | p99 ms | peak RSS MB | failed |',
      '|---|---:|---:|---:|---:|---:|',
    );
    for (const server of [
      'service',
      'metrics',
      'bare',
      'service-older-node',
      'bare-older-node',
      'express-alone',
      'nest-alone',
      'naive',
      'pgbench',
    ]) {
      const m = find(server, id);
      if (!m) continue;
      const name = SERVER_TITLES[server] ?? server;
      lines.push(
        `| ${name} | ${number(m.rps)} | ${number(m.p50, 2)} | ${number(m.p99, 2)} | ${number(m.peakRssMb)} | ${m.failures} |`,
      );
    }
    const service = find('service', id);
    const bare = find('bare', id);
    const naive = find('naive', id);
    if (service && bare && naive) {
      lines.push(
        '',
        `service/bare: throughput ${ratio(service.rps / bare.rps)}, p99 ${ratio(service.p99 / bare.p99)}. ` +
          `service/naive: throughput ${ratio(service.rps / naive.rps)}, p50 ${ratio(service.p50 / naive.p50)}.`,
      );
    }
    const olderService = find('service-older-node', id);
    const olderBare = find('bare-older-node', id);
    if (service && bare && olderService && olderBare) {
      lines.push(
        '',
        `older Node: service/bare ${ratio(olderService.rps / olderBare.rps)}, p99 ` +
          `${ratio(olderService.p99 / olderBare.p99)}; the service on the shipped Node against ` +
          `the older: throughput ${ratio(service.rps / olderService.rps)}, peak RSS ` +
          `${number(service.peakRssMb)} against ${number(olderService.peakRssMb)} MB.`,
      );
    }
    const express = find('express-alone', id);
    const nest = find('nest-alone', id);
    if (service && bare && express && nest) {
      const cpu = (m: Measurement) => `${number(1000 * (m.cpuMsPerRequest ?? NaN))} µs`;
      lines.push(
        '',
        `server CPU per request: bare ${cpu(bare)}, Express alone ${cpu(express)}, NestJS on ` +
          `Express alone ${cpu(nest)}, the service ${cpu(service)}; throughput against bare: ` +
          `Express alone ${ratio(express.rps / bare.rps)}, NestJS alone ${ratio(nest.rps / bare.rps)}.`,
      );
    }
    const metrics = find('metrics', id);
    if (service && metrics) {
      lines.push(
        '',
        `metrics on/off: throughput ${ratio(metrics.rps / service.rps)}, ` +
          `p50 ${ratio(metrics.p50 / service.p50)}, p99 ${ratio(metrics.p99 / service.p99)}, ` +
          `server CPU per request ${ratio((metrics.cpuMsPerRequest ?? NaN) / (service.cpuMsPerRequest ?? NaN))}.`,
      );
    }
    lines.push('');
  }
  if (report.sync) lines.push(...renderSync(report.sync), '');
  if (report.changeStream) lines.push(...renderChangeStream(report.changeStream, report.sync), '');
  const load = (id: string) => {
    const m = find('service', id);
    return (
      m && {
        rps: m.rps,
        cpuMsPerRequest: m.cpuMsPerRequest ?? NaN,
        bytesPerResponse: m.bytesPerResponse ?? NaN,
      }
    );
  };
  lines.push(...renderCompression(load('b'), load('b-br'), report.compressionLevels));
  if (report.imports) lines.push(...renderImports(report.imports), '');
  if (report.webhooks) lines.push(...renderWebhooks(report.webhooks), '');
  if (report.noisyNeighbour) lines.push(...renderNoisyNeighbour(report.noisyNeighbour), '');
  if (report.manyTenants) lines.push(...renderManyTenants(report.manyTenants), '');
  if (report.refusalCost) {
    const { refusals, cpuMsPerRefusal, refusalsPerSecond } = report.refusalCost;
    lines.push(
      '### (x) the CPU of a refusal',
      '',
      "The workspace's one request in progress held on a locked table (a server with " +
        'MAX_IN_FLIGHT_PER_WORKSPACE 1), 10 clients of a known key refused meanwhile: ' +
        `${refusals} refusals, ${refusalsPerSecond.toFixed(0)}/s, ` +
        `${cpuMsPerRefusal.toFixed(3)} ms of the service's CPU each.`,
      '',
    );
  }
  if (report.fairQueueCost) {
    lines.push(...renderFairQueueCost(report.fairQueueCost, fairQueueShares(report, find)), '');
  }
  lines.push('### Targets', '', '| target | measured | |', '|---|---|---|');
  for (const [target, measured, met] of targets(report, find)) {
    lines.push(`| ${target} | ${measured} | ${met ? 'met' : '**missed**'} |`);
  }
  return lines.join('\n');
}

function renderSync({
  feedLimit,
  offsetLimit,
  feed,
  offset,
}: NonNullable<Report['sync']>): string[] {
  const row = (name: string, pass: SyncPass) =>
    `| ${name} | ${pass.requests.toLocaleString('en')} | ${number(pass.seconds, 1)} | ` +
    `${number((1000 * pass.seconds) / pass.requests, 1)} | ${pass.distinct.toLocaleString('en')} |`;
  return [
    '### (h) full initial sync of the large workspace, one client, service',
    '',
    '| pass | requests | wall time s | ms per request | distinct companies |',
    '|---|---:|---:|---:|---:|',
    row(`feed, limit=${feedLimit}, following nextCursor until hasMore is false`, feed),
    row(`list, limit=${offsetLimit}, offset 0, ${offsetLimit}, … until a short page`, offset),
    '',
    `offsets/feed wall time: ${ratio(offset.seconds / feed.seconds)}. One request at a time, ` +
      "the client's JSON parsing included; rate limit raised as for the load.",
  ];
}

function renderChangeStream(
  {
    large,
    largeWithFields,
    largeBesideQuiet,
    small,
    copy,
    quietAlone,
    quietDuringStream,
  }: ChangeStreamRun,
  sync: Report['sync'],
): string[] {
  const perSecond = (changes: number, seconds: number) =>
    `${Math.round(changes / seconds).toLocaleString('en')}/s`;
  const row = (name: string, requests: number, seconds: number, changes: number, mb: number) =>
    `| ${name} | ${requests.toLocaleString('en')} | ${number(seconds, 1)} | ` +
    `${perSecond(changes, seconds)} | ${number(mb, 0)} | ${number((mb * 1e6) / changes)} |`;
  return [
    '### (s) the change stream: a full initial sync of the large workspace in one request',
    '',
    '| pass | requests | wall time s | changes | MB received | bytes per change |',
    '|---|---:|---:|---:|---:|---:|',
    row(
      'stream, GET /v1/companies/changes/stream',
      large.requests,
      large.seconds,
      large.changes,
      large.bytes / 1e6,
    ),
    row(
      `stream with fields=id,${STREAM_FIELDS}`,
      largeWithFields.requests,
      largeWithFields.seconds,
      largeWithFields.changes,
      largeWithFields.bytes / 1e6,
    ),
    ...(sync
      ? [
          row(
            `feed, limit=${sync.feedLimit} (h)`,
            sync.feed.requests,
            sync.feed.seconds,
            sync.feed.distinct,
            NaN,
          ),
          row(
            `list, limit=${sync.offsetLimit}, offsets (h)`,
            sync.offset.requests,
            sync.offset.seconds,
            sync.offset.distinct,
            NaN,
          ),
        ]
      : []),
    ...(copy
      ? [
          row(
            'the same rows as JSON: COPY (...) TO STDOUT, psql to /dev/null',
            1,
            copy.seconds,
            copy.rows,
            copy.bytes / 1e6,
          ),
        ]
      : []),
    '',
    `First line after ${number(large.firstLineMs)} ms. The service's peak RSS: ` +
      `${number(large.peakRssMb)} MB streaming ${large.distinct.toLocaleString('en')} companies, ` +
      `${number(small.peakRssMb)} MB streaming ${small.distinct.toLocaleString('en')} ` +
      `(${number(small.seconds, 2)} s). A quiet workspace reading \`limit=50\` pages: p50/p99 ` +
      `${number(quietAlone.p50, 1)}/${number(quietAlone.p99, 1)} ms alone, ` +
      `${number(quietDuringStream.p50, 1)}/${number(quietDuringStream.p99, 1)} ms during the stream ` +
      `(which then reads one page at a time instead of three, and took ` +
      `${number(largeBesideQuiet.seconds, 1)} s).`,
  ];
}

function renderImports(runs: ImportRuns): string[] {
  const seconds = (values: number[]) => values.map((v) => v.toFixed(2)).join(', ');
  const on = median(runs.on);
  const off = median(runs.off);
  return [
    `### (i) import of ${runs.companies.toLocaleString('en')} companies × ` +
      `${runs.contactsPerCompany} contacts into a fresh workspace, change tracking on and off`,
    '',
    '| change tracking | imports | median s | each import s, in order |',
    '|---|---:|---:|---|',
    `| on | ${runs.on.length} | ${number(on, 2)} | ${seconds(runs.on)} |`,
    `| off (the *_changes_* triggers disabled) | ${runs.off.length} | ${number(off, 2)} | ` +
      `${seconds(runs.off)} |`,
    '',
    `on/off (medians): ${ratio(on / off)}. ImportService through Nest, as the admin tool runs ` +
      'it: each import in an application of its own (new database sessions) and into a new ' +
      'workspace, after one unmeasured import; pairs in alternating order (on, off, off, on, …).',
    '',
    `No-op re-import of the last tracked file into its workspace: ${number(runs.noOp.seconds, 2)} ` +
      `s, ${runs.noOp.companyChanges} rows of company_changes and ${runs.noOp.leadChanges} of ` +
      'lead_changes written (rows whose txid is above a transaction id taken just before).',
  ];
}

type Find = (server: string, workload: string) => Measurement | undefined;

function targets(report: Report, find: Find): [string, string, boolean][] {
  const rows: [string, string, boolean][] = [];
  const get = (server: string, workload: string) => {
    const m = find(server, workload);
    return m ?? { rps: NaN, p50: NaN, p99: NaN, peakRssMb: NaN, failures: 0 };
  };
  // The service against the bare server, on the Node that ships with its flags: throughput at
  // least, and p99 at most, these ratios (Infinity: no bound).
  const againstBare: [string, number, number][] = [
    ['e', 0.9, 1.5],
    ['a', 0.9, 1.3],
    ['f', 0.85, Infinity],
    ['z', 0.4, Infinity],
  ];
  // Workload (a) asking for four fields, against (a) whole, on each server.
  for (const server of ['service', 'bare']) {
    const whole = find(server, 'a');
    const selected = find(server, 'a4');
    if (!whole || !selected) continue;
    const faster = selected.rps / whole.rps;
    rows.push([`(a4) ${server}: throughput >= 1.5x (a)`, ratio(faster), faster >= 1.5]);
  }
  for (const [id, least, most] of againstBare) {
    const service = find('service', id);
    const bare = find('bare', id);
    if (!service || !bare) continue;
    const throughput = service.rps / bare.rps;
    const tail = service.p99 / bare.p99;
    rows.push([`(${id}) throughput >= ${least}x bare`, ratio(throughput), throughput >= least]);
    if (most !== Infinity) rows.push([`(${id}) p99 <= ${most}x bare`, ratio(tail), tail <= most]);
  }
  // Peak RSS of the service under every workload, the stream included, on the Node that ships.
  const peaks = [
    ...report.measurements.filter((m) => m.server === 'service').map((m) => m.peakRssMb),
    ...(report.changeStream ? [report.changeStream.large.peakRssMb] : []),
  ];
  if (peaks.length > 0) {
    const peak = Math.max(...peaks);
    rows.push(['service peak RSS, every workload <= 256 MiB', `${number(peak)} MB`, peak <= 256]);
  }
  // No workload slower on the Node that ships than on the older one, in the same run.
  for (const id of ['a', 'e', 'z']) {
    const shipped = find('service', id);
    const older = find('service-older-node', id);
    if (!shipped || !older) continue;
    const versus = shipped.rps / older.rps;
    rows.push([`(${id}) shipped Node >= older Node (throughput)`, ratio(versus), versus >= 1]);
  }
  for (const id of ['c', 'c2', 'c1']) {
    const deep = get('service', id);
    const naiveDeep = get('naive', id);
    rows.push([`(${id}) deep page p50 <= 150 ms`, `${number(deep.p50, 1)} ms`, deep.p50 <= 150]);
    const faster = naiveDeep.p50 / deep.p50;
    rows.push([`(${id}) >= 5x faster than naive (p50)`, ratio(faster), faster >= 5]);
  }
  const small = get('service', 'a');
  for (const id of ['d0', 'd']) {
    const growth = get('service', id).p50 / small.p50;
    rows.push([
      `(${id}) page one cost, 1M vs 5k companies (p50) <= 2x`,
      ratio(growth),
      growth <= 2,
    ]);
  }
  const domains = find('service', 'l');
  if (domains) {
    rows.push(['(l) domain lookup p50 <= 5 ms', `${number(domains.p50, 1)} ms`, domains.p50 <= 5]);
    rows.push([
      '(l) domain lookup p99 <= 20 ms',
      `${number(domains.p99, 1)} ms`,
      domains.p99 <= 20,
    ]);
  }
  const search = find('service', 'l1');
  if (search) {
    rows.push(['(l1) q p50 <= 50 ms', `${number(search.p50, 1)} ms`, search.p50 <= 50]);
  }
  const feedPages = FEED_PAGES.flatMap((id) => find('service', id) ?? []);
  for (const page of feedPages) {
    const p50 = page.p50;
    rows.push([`(${page.workload}) feed page p50 <= 60 ms`, `${number(p50, 1)} ms`, p50 <= 60]);
  }
  if (feedPages.length === FEED_PAGES.length) {
    const p50s = feedPages.map((page) => page.p50);
    const spread = Math.max(...p50s) / Math.min(...p50s);
    rows.push(['(g1–g3) slowest/fastest feed page p50 <= 1.5x', ratio(spread), spread <= 1.5]);
  }
  if (report.sync) {
    const faster = report.sync.offset.seconds / report.sync.feed.seconds;
    rows.push([
      '(h) full sync through the feed >= 5x faster than offsets',
      ratio(faster),
      faster >= 5,
    ]);
  }
  if (report.imports) {
    const cost = median(report.imports.on) / median(report.imports.off);
    rows.push([
      '(i) import with change tracking <= 1.3x without (medians)',
      ratio(cost),
      cost <= 1.3,
    ]);
    const { companyChanges, leadChanges } = report.imports.noOp;
    const changes = companyChanges + leadChanges;
    rows.push(['(i) no-op re-import emits 0 changes', String(changes), changes === 0]);
  }
  if (report.webhooks) {
    const { deliveredPerSecond, p99, targetRate } = report.webhooks;
    rows.push([
      `(w) sustained webhook dispatch >= 500 events/s (offered ${targetRate}/s)`,
      `${number(deliveredPerSecond)} events/s`,
      deliveredPerSecond >= 500,
    ]);
    rows.push(['(w) commit to delivery p99 < 2 s', `${number(p99)} ms`, p99 < 2000]);
  }
  if (report.noisyNeighbour) {
    const run = report.noisyNeighbour;
    // What the burst adds over the noisy workspace's admitted load (the floor), which on shared
    // cores sets the quiet one's latency by itself (the floor's ratio to alone is reported).
    const tail = run.quietDuringBurst.p99 / run.quietBesideLimit.p99;
    rows.push([
      '(n) quiet p99 during the burst <= 1.1x beside the noisy one at its limit',
      ratio(tail),
      tail <= 1.1,
    ]);
    // The longest read beside the burst against the quiet workspace's p99 at the floor: on its
    // kept connection, and connecting for each read.
    const longest = run.quietDuringBurst.max / run.quietBesideLimit.p99;
    rows.push([
      '(n) quiet maximum during the burst <= 3x its p99 beside the noisy one at its limit',
      ratio(longest),
      longest <= 3,
    ]);
    const connecting = run.quietNewConnectionsDuringBurst.max / run.quietBesideLimit.p99;
    rows.push(['(n) the same, a new connection for each read', ratio(connecting), connecting <= 3]);
    rows.push([
      '(n) quiet workspace refused during the burst: 0',
      String(run.quietDuringBurst.refused),
      run.quietDuringBurst.refused === 0,
    ]);
    const others = Object.keys(run.noisyStatuses).filter((s) => s !== '200' && s !== '429');
    rows.push([
      '(n) noisy workspace: 200 and 429 only',
      others.join(', ') || 'none',
      !others.length,
    ]);
    const served = run.burstServedRps / run.unloadedMaxRps;
    rows.push(['(n) pages served during the burst >= 0.9x unloaded', ratio(served), served >= 0.9]);
    rows.push(['(n) peak RSS < 256 MiB', `${number(run.peakRssMb)} MB`, run.peakRssMb < 256]);
  }
  if (report.changeStream) {
    const { large, largeWithFields, small, copy, quietAlone, quietDuringStream } =
      report.changeStream;
    const lighter = large.seconds / largeWithFields.seconds;
    rows.push([
      `(s) the stream with fields=id,${STREAM_FIELDS} >= 3x faster than the whole stream`,
      ratio(lighter),
      lighter >= 3,
    ]);
    if (copy) {
      const thanCopy = copy.seconds / largeWithFields.seconds;
      rows.push([
        '(s) the stream with those fields >= 2x faster than COPY of the whole rows as JSON',
        ratio(thanCopy),
        thanCopy >= 2,
      ]);
    }
    if (report.sync) {
      const faster = report.sync.feed.seconds / large.seconds;
      rows.push([
        '(s) full sync through the stream >= 4x faster than the paged feed (h)',
        ratio(faster),
        faster >= 4,
      ]);
    }
    if (copy) {
      const share = copy.seconds / large.seconds;
      rows.push(["(s) the stream's throughput >= 0.5x COPY's", ratio(share), share >= 0.5]);
    }
    const rss = Math.max(large.peakRssMb, small.peakRssMb);
    rows.push([
      `(s) peak RSS < 256 MiB, streaming ${small.distinct.toLocaleString('en')} and ${large.distinct.toLocaleString('en')} companies`,
      `${number(small.peakRssMb)} MB / ${number(large.peakRssMb)} MB`,
      rss < 256,
    ]);
    rows.push([
      '(s) first line < 200 ms',
      `${number(large.firstLineMs)} ms`,
      large.firstLineMs < 200,
    ]);
    const tail = quietDuringStream.p99 / quietAlone.p99;
    rows.push(['(s) quiet p99 during a stream <= 3x alone', ratio(tail), tail <= 3]);
  }
  if (report.manyTenants) {
    const run = report.manyTenants;
    const shed = run.statuses['503'] ?? 0;
    rows.push(['(t) many tenants at their limit: 503 answers 0', String(shed), shed === 0]);
    const others = Object.keys(run.statuses).filter((status) => status !== '200');
    rows.push(['(t) many tenants: 200 only', others.join(', ') || 'none', !others.length]);
    rows.push(['(t) peak RSS < 256 MiB', `${number(run.peakRssMb)} MB`, run.peakRssMb < 256]);
  }
  if (report.fairQueueCost) {
    const worst = Math.max(...fairQueueShares(report, find).map(([, share]) => share));
    rows.push([
      '(q) fair queue CPU on (a) to (f) within 3 %',
      `${(100 * worst).toFixed(3)} %`,
      worst <= 0.03,
    ]);
  }
  if (report.webhooks) {
    const { p99 } = report.webhooks.hanging;
    rows.push([
      '(w) healthy endpoint p99 beside a hanging one < 2 s',
      `${number(p99)} ms`,
      p99 < 2000,
    ]);
  }
  const startup = report.startup.service ?? NaN;
  rows.push(['service start-up to ready <= 2 s', `${number(startup)} ms`, startup <= 2000]);
  return rows;
}

/** The fair queue's contended CPU per statement against the service's CPU per request, by workload. */
function fairQueueShares(report: Report, find: Find): [string, number][] {
  const cost = report.fairQueueCost?.contendedNs ?? NaN;
  return ['a', 'b', 'c', 'd', 'e', 'f']
    .map((id) => [id, find('service', id)?.cpuMsPerRequest] as const)
    .filter((entry): entry is readonly [string, number] => entry[1] !== undefined)
    .map(([id, cpuMs]) => [id, cost / (cpuMs * 1e6)]);
}

function renderFairQueueCost(cost: FairQueueCost, shares: [string, number][]): string[] {
  return [
    "### (q) the fair queue's cost",
    '',
    "The queue's own CPU per statement, measured in process on statements that resolve at once " +
      `(bench/fair-queue-cost.ts): ${cost.uncontendedNs.toFixed(0)} ns with a seat free, ` +
      `${cost.contendedNs.toFixed(0)} ns when 100 callers of 20 workspaces share 10 seats. ` +
      "Against the service's CPU per request: " +
      shares.map(([id, share]) => `(${id}) ${(100 * share).toFixed(3)} %`).join(', ') +
      '. It adds no wait while a seat is free; when none is, statements waited as long in the ' +
      "pool's own queue before.",
  ];
}

function renderNoisyNeighbour(run: NoisyNeighbourRun): string[] {
  const ms = (value: number) => `${value.toFixed(1)} ms`;
  const cpu = ({ service, generator }: CpuPerPage) =>
    `${service.toFixed(2)} ms / ${generator.toFixed(2)} ms`;
  const statuses = Object.entries(run.noisyStatuses)
    .map(([status, count]) => `${count} x ${status}`)
    .join(', ');
  const phases: [string, QuietReads, string][] = [
    ['alone', run.quietAlone, '–'],
    [
      'beside the noisy one at 20 in flight, closed loop, no refusal',
      run.quietBesideLimit,
      run.unloadedMaxRps.toFixed(1),
    ],
    ['during the burst', run.quietDuringBurst, run.burstServedRps.toFixed(1)],
    ['during the burst, a new connection for each read', run.quietNewConnectionsDuringBurst, '–'],
  ];
  const gc = ({ server }: QuietReads) =>
    Object.entries(server?.gc ?? {})
      .filter(([, { count }]) => count > 0)
      .map(([kind, { count, totalMs }]) => `${count} ${kind} (${totalMs.toFixed(0)} ms)`)
      .join(', ') || 'none';
  return [
    '### (n) noisy neighbour',
    '',
    `One workspace sends waves of ${run.waveSize} concurrent \`GET /v1/companies?limit=200\` ` +
      `through ${run.noisyKeys} keys, each wave when the last is answered; another reads ` +
      '`limit=50` pages one after another, in a process of its own. The service with its ' +
      'metrics on, MAX_IN_FLIGHT_PER_WORKSPACE 20. The first read opens the quiet ' +
      "reader's connection as the phase begins; p50, p99 and the maximum are of the reads " +
      'after it, on that connection (or on a new connection each, in the last phase, which ' +
      'sends the same burst again).',
    '',
    '| the quiet workspace | p50 | p99 | max | first read | reads | refused | pages/s served, both |',
    '|---|---|---|---|---|---|---|---|',
    ...phases.map(
      ([name, reads, served]) =>
        `| ${name} | ${ms(reads.p50)} | ${ms(reads.p99)} | ${ms(reads.max)} | ` +
        `${ms(reads.first)} | ${reads.count} | ${reads.refused} | ${served} |`,
    ),
    '',
    "The service meanwhile: its event-loop delay (prom-client's `monitorEventLoopDelay`, 10 ms " +
      'resolution) and its GC pauses (`gc_pause_seconds`):',
    '',
    '| phase | event-loop delay p50 | p99 | max | GC pauses (total) | longest GC pause |',
    '|---|---|---|---|---|---|',
    ...phases.map(([name, reads]) => {
      const delay = reads.server?.eventLoopDelay;
      return (
        `| ${name} | ${delay ? ms(delay.p50) : '–'} | ${delay ? ms(delay.p99) : '–'} | ` +
        `${delay ? ms(delay.max) : '–'} | ${gc(reads)} | ` +
        `${reads.server ? ms(reads.server.gcLongestMs) : '–'} |`
      );
    }),
    '',
    `The noisy workspace's answers: ${statuses}. Peak RSS ${run.peakRssMb.toFixed(0)} MB.`,
    '',
    'CPU per page served (both workspaces), the service / the process sending the noisy ' +
      `requests: at the limit ${cpu(run.cpuPerPage.atLimit)}, during the burst ` +
      `${cpu(run.cpuPerPage.duringBurst)}. The floor (beside the limit) against alone: p99 ` +
      `${(run.quietBesideLimit.p99 / run.quietAlone.p99).toFixed(2)}x.`,
  ];
}

function renderManyTenants(run: ManyTenantsRun): string[] {
  const ms = (value: number) => `${value.toFixed(1)} ms`;
  const statuses = Object.entries(run.statuses)
    .map(([status, count]) => `${count} x ${status}`)
    .join(', ');
  return [
    '### (t) many tenants',
    '',
    `${run.workspaces} workspaces at their in-flight limit of 20 at once (${run.requestsPerWave} ` +
      "requests a wave, each wave when the last is answered): one on the large workspace's " +
      "`limit=200` page, the others on small workspaces' `limit=5` pages. " +
      `${run.waves} waves: ${statuses}; ${run.servedRps.toFixed(1)} pages/s served; peak RSS ` +
      `${run.peakRssMb.toFixed(0)} MB.`,
    '',
    '| workspace | served | p50 | p99 | not served |',
    '|---|---|---|---|---|',
    ...run.perWorkspace.map(
      ({ name, count, p50, p99, notServed }) =>
        `| ${name} | ${count} | ${ms(p50)} | ${ms(p99)} | ${notServed} |`,
    ),
  ];
}

import type { BenchScale, VisitStorage } from './data';
import { renderVisitImport, VISIT_IMPORT_TARGETS, type VisitImportRuns } from './visit-import';
import { renderCompression, type CompressionLevels } from './compression';
import {
  IMPORT_TARGETS,
  type ImportRuns,
  SYNC_TARGETS,
  type SyncPass,
  type SyncRun,
} from './feeds';
import { renderWebhooks, WEBHOOK_TARGETS, type WebhookRun } from './webhooks';
import { FAIR_QUEUE_TARGETS, type FairQueueCost } from './fair-queue-cost';
import { CHANGE_STREAM_TARGETS, type ChangeStreamRun, STREAM_FIELDS } from './change-stream';
import { MANY_TENANTS_TARGETS, type ManyTenantsRun } from './many-tenants';
import {
  type CpuPerPage,
  NOISY_NEIGHBOUR_TARGETS,
  type NoisyNeighbourRun,
  type QuietReads,
} from './noisy-neighbour';
import type { RefusalCost } from './refusal-cost';
import type { MeasuredServer, Measurement, ServerName } from './run-settings';
import type { Machine } from './setup';
import { median, type Measured, type Target, type TargetRow, targetRows } from './targets';
import { WORKLOADS } from './workloads';

export interface Report {
  smoke: boolean;
  scale: BenchScale;
  seconds: number;
  connections: number;
  /** Seconds the data took to generate, undefined when reused. */
  generation: number | undefined;
  /** The visit tables' rows and size, and the share of companies that viewed (vp)'s pages. */
  visitData?: { storage: VisitStorage; shares: { page: string; share: number }[] };
  machine: Machine;
  /** The Node versions the servers ran on, and the service's node flags. */
  node: { shipped: string; older: string; serviceFlags: string[] };
  startup: Partial<Record<ServerName, number>>;
  workloads: { id: string; title: string }[];
  measurements: Measurement[];
  ceiling: Measurement[];
  /** (h) the full sync of the large workspace, through the feed and by offsets. */
  sync?: SyncRun;
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
  /** (vi) the visit import against COPY, tracking on and off. */
  visitImport?: VisitImportRuns;
}

const SERVER_TITLES: Record<string, string> = {
  metrics: 'service, METRICS_PORT set',
  'service-older-node': 'service, older Node',
  'bare-older-node': 'bare, older Node',
  'express-alone': 'Express alone',
  'nest-alone': 'NestJS on Express alone',
  pgbench: 'pgbench (database alone)',
};

const number = (value: number, digits = 0) =>
  Number.isFinite(value) ? value.toFixed(digits) : '–';
const ratio = (value: number) => (Number.isFinite(value) ? `${value.toFixed(2)}x` : '–');

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
      `and ${scale.smallLeads.toLocaleString('en')} leads; ` +
      `${scale.largeVisits.toLocaleString('en')} visits in the large workspace and ` +
      `${scale.smallVisits.toLocaleString('en')} in each small one (1 to 8 page views each, ` +
      'over 393 days, denser towards the present)' +
      (report.generation === undefined
        ? ' (reused from a previous run).'
        : `, generated in ${number(report.generation)} s.`),
    ...(report.visitData ? [visitDataLine(report.visitData)] : []),
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
  if (report.visitImport) {
    lines.push(...renderVisitImport(report.visitImport), '', visitBytesLine(report), '');
  }
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
  for (const [target, measured, verdict] of targets(report, find)) {
    lines.push(`| ${target} | ${measured} | ${verdict} |`);
  }
  return lines.join('\n');
}

/** The visit tables' size on disk and the shares of (vp)'s pages, for the settings' list. */
function visitDataLine({ storage, shares }: NonNullable<Report['visitData']>): string {
  const mb = (bytes: number) => `${(bytes / 1e6).toFixed(0)} MB`;
  return (
    `- Visits: ${storage.visits.toLocaleString('en')} visits and ` +
    `${storage.pageViews.toLocaleString('en')} page views, on disk (heap, TOAST and indexes of ` +
    `every partition) ${mb(storage.visitBytes)} of visits and ${mb(storage.pageViewBytes)} of ` +
    `page views, ${number(storage.visitBytes / storage.visits)} bytes per visit and ` +
    `${number(storage.pageViewBytes / storage.pageViews)} per page view, plus ` +
    `${mb(storage.changeBytes)} of visit_changes. Companies of the large workspace that viewed ` +
    `a page in the last 30 days: ${shares
      .map(({ page, share }) => `${page} ${(100 * share).toFixed(1)} %`)
      .join(', ')}.`
  );
}

/** Bytes per page view on disk beside the NDJSON's, from (vi)'s file. */
function visitBytesLine({ visitData, visitImport }: Report): string {
  if (!visitData) return '';
  const { storage } = visitData;
  const onDisk = (storage.visitBytes + storage.pageViewBytes) / storage.pageViews;
  const ndjson = (visitImport?.fileBytes ?? NaN) / (visitImport?.pageViews ?? NaN);
  return (
    `Bytes per page view: ${number(onDisk)} on disk (its share of its visit's row included, ` +
    `the large data's mean of ${(storage.pageViews / storage.visits).toFixed(2)} pages a visit), ` +
    `${number(ndjson)} in the import's NDJSON (3 pages a visit).`
  );
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

type Find = (server: MeasuredServer, workload: string) => Measurement | undefined;

// The service across the whole run, on the Node that ships with its flags.
const RUN_TARGETS: Target<Report>[] = [
  {
    // Every workload, the stream included.
    says: 'service peak RSS, every workload <= 256 MiB',
    figure: ({ measurements, changeStream }) => {
      const peaks = [
        ...measurements.filter((m) => m.server === 'service').map((m) => m.peakRssMb),
        ...(changeStream ? [changeStream.large.peakRssMb] : []),
      ];
      return peaks.length === 0 ? undefined : Math.max(...peaks);
    },
    atMost: 256,
    unit: 'MB',
  },
  {
    says: 'service start-up to ready <= 2 s',
    figure: ({ startup }) => startup.service,
    atMost: 2000,
    unit: 'ms',
  },
];

/**
 * One row per declared target, in the declarations' order: the workloads' (workloads.ts), then the
 * other measurements', then the run's. A target whose measurement did not run says so.
 */
function targets(report: Report, find: Find): TargetRow[] {
  const on = (workload: string): Measured => ({
    of: (server, other = workload) => find(server, other),
  });
  const shares = report.fairQueueCost && {
    cost: report.fairQueueCost,
    shares: fairQueueShares(report, find),
  };
  const stream = report.changeStream && { stream: report.changeStream, sync: report.sync };
  return [
    ...WORKLOADS.flatMap(({ id, targets }) => targetRows(id, on(id), targets ?? [])),
    ...targetRows('h', report.sync, SYNC_TARGETS),
    ...targetRows('i', report.imports, IMPORT_TARGETS),
    ...targetRows('vi', report.visitImport, VISIT_IMPORT_TARGETS),
    ...targetRows('w', report.webhooks, WEBHOOK_TARGETS),
    ...targetRows('n', report.noisyNeighbour, NOISY_NEIGHBOUR_TARGETS),
    ...targetRows('s', stream, CHANGE_STREAM_TARGETS),
    ...targetRows('t', report.manyTenants, MANY_TENANTS_TARGETS),
    ...targetRows('q', shares, FAIR_QUEUE_TARGETS),
    ...targetRows(undefined, report, RUN_TARGETS),
  ];
}

/** The fair queue's contended CPU per statement against the service's CPU per request, by workload. */
function fairQueueShares(report: Report, find: Find): [workload: string, share: number][] {
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

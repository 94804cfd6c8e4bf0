import type { BenchScale } from './data';

export type ServerName = 'service' | 'bare' | 'naive';

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
}

export interface Report {
  smoke: boolean;
  scale: BenchScale;
  seconds: number;
  connections: number;
  /** Seconds the data took to generate, undefined when reused. */
  generation: number | undefined;
  machine: { cpu: string; memoryGb: number; node: string; postgres: string; date: string };
  startup: Partial<Record<ServerName, number>>;
  workloads: { id: string; title: string }[];
  measurements: Measurement[];
  ceiling: Measurement[];
}

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
    `- Machine: ${report.machine.cpu}, ${report.machine.memoryGb} GiB; Node ${report.machine.node}; ${report.machine.postgres}.`,
    `- Data: one workspace of ${scale.largeCompanies.toLocaleString('en')} companies ` +
      `(${scale.contactsPerCompany} contacts each) and ${scale.largeLeads.toLocaleString('en')} leads, ` +
      `plus ${scale.smallWorkspaces} workspaces of ${scale.smallCompanies.toLocaleString('en')} companies ` +
      `and ${scale.smallLeads.toLocaleString('en')} leads` +
      (report.generation === undefined
        ? ' (reused from a previous run).'
        : `, generated in ${number(report.generation)} s.`),
    `- Load: autocannon, ${report.connections} connections (c1: one), per workload the servers in ` +
      `the order service, bare, naive, bare, service, each period ${report.seconds} s after a ` +
      'warm-up; requests drawn at random from the workload; p50 and p99 over every response. ' +
      `pgbench: the same statements, ${report.connections} clients.`,
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
    for (const server of ['service', 'bare', 'naive', 'pgbench']) {
      const m = find(server, id);
      if (!m) continue;
      const name = server === 'pgbench' ? 'pgbench (database alone)' : server;
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
    lines.push('');
  }
  lines.push('### Targets', '', '| target | measured | |', '|---|---|---|');
  for (const [target, measured, met] of targets(report, find)) {
    lines.push(`| ${target} | ${measured} | ${met ? 'met' : '**missed**'} |`);
  }
  return lines.join('\n');
}

type Find = (server: string, workload: string) => Measurement | undefined;

function targets(report: Report, find: Find): [string, string, boolean][] {
  const rows: [string, string, boolean][] = [];
  const get = (server: string, workload: string) => {
    const m = find(server, workload);
    return m ?? { rps: NaN, p50: NaN, p99: NaN, peakRssMb: NaN, failures: 0 };
  };
  for (const id of ['a', 'e', 'f']) {
    const service = get('service', id);
    const bare = get('bare', id);
    const throughput = service.rps / bare.rps;
    const tail = service.p99 / bare.p99;
    rows.push([`(${id}) throughput >= 0.8x bare`, ratio(throughput), throughput >= 0.8]);
    rows.push([`(${id}) p99 <= 1.5x bare`, ratio(tail), tail <= 1.5]);
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
  const rss = Math.max(
    ...report.measurements.filter((m) => m.server === 'service').map((m) => m.peakRssMb),
  );
  rows.push(['service peak RSS under load <= 200 MB', `${number(rss)} MB`, rss <= 200]);
  const startup = report.startup.service ?? NaN;
  rows.push(['service start-up to ready <= 2 s', `${number(startup)} ms`, startup <= 2000]);
  return rows;
}

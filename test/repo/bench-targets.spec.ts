import { renderReport, type Report } from '../../bench/report';
import type { MeasuredServer, Measurement } from '../../bench/run-settings';
import { WORKLOADS } from '../../bench/workloads';

/*
 * The benchmark's targets are declared beside their workloads (bench/workloads.ts) and the other
 * measurements; the report writes one row for each. A partial run (BENCH_WORKLOADS=a,e,l) must say
 * which targets it did not measure rather than count them as missed, and a target against a floor
 * (pgbench, the bare server) must be judged on the ratio of the two.
 */

const measured = (
  server: MeasuredServer,
  workload: string,
  rps: number,
  p50: number,
  p99: number,
): Measurement => ({ server, workload, rps, p50, p99, failures: 0, peakRssMb: 150 });

/** A partial run of (a), (e) and (l), with the figures of the full run of 2026-11-29. */
const partial: Report = {
  smoke: false,
  scale: {
    largeCompanies: 1_000_000,
    contactsPerCompany: 3,
    largeLeads: 300_000,
    smallWorkspaces: 200,
    smallCompanies: 5_000,
    smallLeads: 1_500,
    largeVisits: 5_000_000,
    smallVisits: 1_000,
  },
  seconds: 10,
  connections: 10,
  generation: undefined,
  machine: { cpu: '2 × CPU', memoryGb: 24, postgres: 'PostgreSQL 15', date: '2026-11-29' },
  node: { shipped: 'v24.22.3', older: 'v20.20.2', serviceFlags: [] },
  startup: { service: 935 },
  workloads: ['a', 'e', 'l'].map((id) => ({ id, title: id })),
  measurements: [
    measured('service', 'a', 381, 24.94, 60.87),
    measured('bare', 'a', 408, 23.52, 53.94),
    measured('service', 'e', 4150, 2.33, 6.08),
    measured('bare', 'e', 4191, 2.22, 5.51),
    measured('service', 'l', 1039, 9.33, 16.04),
    measured('bare', 'l', 1258, 7.13, 19.9),
  ],
  ceiling: [measured('pgbench', 'l', 2133, 4.61, 8.76)],
};

/** The report's rows of targets: [target, measured, verdict]. */
function targetRows(report: Report): string[][] {
  const text = renderReport(report);
  return text
    .slice(text.indexOf('### Targets'))
    .split('\n')
    .filter((line) => line.startsWith('| (') || line.startsWith('| service'))
    .map((line) =>
      line
        .split('|')
        .slice(1, -1)
        .map((cell) => cell.trim()),
    );
}

const rows = targetRows(partial);
const verdictOf = (start: string) => rows.find(([target]) => target.startsWith(start))?.[2];

it('writes a row for every declared target of the workloads, run or not', () => {
  for (const { id, targets = [] } of WORKLOADS) {
    expect(rows.filter(([target]) => target.startsWith(`(${id}) `))).toHaveLength(targets.length);
  }
});

it('says "not run" of a target whose workload did not run, never "missed"', () => {
  for (const id of ['c', 'c2', 'c1', 'd0', 'd', 'g1', 'f', 'h', 's', 'n', 'w']) {
    const ofWorkload = rows.filter(([target]) => target.startsWith(`(${id}) `));
    expect(ofWorkload.length).toBeGreaterThan(0);
    expect(ofWorkload.map(([, , verdict]) => verdict)).toEqual(ofWorkload.map(() => 'not run'));
  }
  // (a)'s own targets ran; the one against the older Node, which this run did not start, did not.
  expect(verdictOf('(a) throughput >= 0.9x bare')).toBe('met');
  expect(verdictOf('(a) shipped Node')).toBe('not run');
});

it('judges a target against a floor on the ratio to it', () => {
  // (l): 9.33 ms against the database alone's 4.61 ms at the same concurrency.
  expect(rows.find(([target]) => target.startsWith('(l) p50 <= 2x pgbench'))).toEqual([
    '(l) p50 <= 2x pgbench',
    '2.02x',
    '**missed**',
  ]);
  const faster = {
    ...partial,
    measurements: partial.measurements.map((m) =>
      m.server === 'service' && m.workload === 'l' ? { ...m, p50: 9.2 } : m,
    ),
  };
  expect(targetRows(faster).find(([target]) => target.startsWith('(l) p50'))?.[2]).toBe('met');
});

import type { MeasuredServer, Measurement } from './run-settings';

/*
 * The targets: each a figure of the run and the bound it must keep, declared beside what it
 * measures (a workload's in workloads.ts, the change stream's in change-stream.ts, ...); the
 * report writes one row per target, from the declarations, whether or not the run measured it.
 */

/** A figure of a run (`Run`: what one measurement returns) and the bound it must keep. */
export interface Target<Run> {
  /** What the row says after its workload's id: `throughput >= 0.9x bare`. */
  says: string;
  /**
   * The figure; undefined when something it is made of was not measured, and the row then says
   * "not run" rather than "missed".
   */
  figure: (run: Run) => number | undefined;
  /** The bound, inclusive: at least this (a throughput, a speed-up), or at most (a latency). */
  atLeast?: number;
  atMost?: number;
  /** How the figure is written: a ratio (`0.93x`), or a quantity with its unit. */
  unit: 'x' | 'ms' | 'MB' | 'events/s' | '%' | '';
}

/** A workload's measurements: `of('bare')` the bare server's on it, `of('service', 'a')` on (a). */
export interface Measured {
  of(server: MeasuredServer, workload?: string): Measurement | undefined;
}

/** A request workload's target: a figure of its measurements (and perhaps another workload's). */
export type WorkloadTarget = Target<Measured>;

type Latency = 'p50' | 'p99';

/** The median of some measured values (the imports' seconds, ...). */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

const per = (a: number | undefined, b: number | undefined) =>
  a === undefined || b === undefined ? undefined : a / b;

/** The service's throughput on the workload, at least `times` that of `server` on it. */
export function throughputAgainst(server: MeasuredServer, times: number): WorkloadTarget {
  return {
    says: `throughput >= ${times}x ${server}`,
    figure: (m) => per(m.of('service')?.rps, m.of(server)?.rps),
    atLeast: times,
    unit: 'x',
  };
}

/**
 * The service's latency on the workload, at most `times` that of `server` on it: of its floor
 * (`pgbench`, the database alone; `bare`, the fastest server), so that a miss is the service's.
 */
export function latencyAgainst(
  latency: Latency,
  server: MeasuredServer,
  times: number,
): WorkloadTarget {
  return {
    says: `${latency} <= ${times}x ${server}`,
    figure: (m) => per(m.of('service')?.[latency], m.of(server)?.[latency]),
    atMost: times,
    unit: 'x',
  };
}

/** The service's latency at most `ms`: for a workload whose floor keeps it with room to spare. */
export function latencyAtMost(latency: Latency, ms: number): WorkloadTarget {
  return {
    says: `${latency} <= ${ms} ms`,
    figure: (m) => m.of('service')?.[latency],
    atMost: ms,
    unit: 'ms',
  };
}

/** The service at least `times` faster than `server` (their p50s). */
export function fasterThan(server: MeasuredServer, times: number): WorkloadTarget {
  return {
    says: `>= ${times}x faster than ${server} (p50)`,
    figure: (m) => per(m.of(server)?.p50, m.of('service')?.p50),
    atLeast: times,
    unit: 'x',
  };
}

/** `server`'s throughput at least `times` its throughput on workload `other`. */
export function throughputAgainstWorkload(
  other: string,
  times: number,
  server: MeasuredServer = 'service',
): WorkloadTarget {
  return {
    says: `${server}: throughput >= ${times}x (${other})`,
    figure: (m) => per(m.of(server)?.rps, m.of(server, other)?.rps),
    atLeast: times,
    unit: 'x',
  };
}

/** The service's latency at most `times` its latency on workload `other`. */
export function latencyAgainstWorkload(
  latency: Latency,
  other: string,
  times: number,
): WorkloadTarget {
  return {
    says: `${latency} <= ${times}x (${other})`,
    figure: (m) => per(m.of('service')?.[latency], m.of('service', other)?.[latency]),
    atMost: times,
    unit: 'x',
  };
}

/** A row of the report's targets: the target, what was measured, and the verdict. */
export type TargetRow = [
  target: string,
  measured: string,
  verdict: 'met' | '**missed**' | 'not run',
];

/**
 * The rows of `targets` for `run` (undefined: the measurement did not run), each named by `id`,
 * the workload or measurement it belongs to (none: the run as a whole).
 */
export function targetRows<Run>(
  id: string | undefined,
  run: Run | undefined,
  targets: readonly Target<Run>[],
): TargetRow[] {
  return targets.map((target) => {
    const says = id === undefined ? target.says : `(${id}) ${target.says}`;
    const figure = run === undefined ? undefined : target.figure(run);
    if (figure === undefined) return [says, '–', 'not run'];
    const met =
      (target.atLeast === undefined || figure >= target.atLeast) &&
      (target.atMost === undefined || figure <= target.atMost);
    return [says, written(figure, target.unit), met ? 'met' : '**missed**'];
  });
}

function written(figure: number, unit: Target<unknown>['unit']): string {
  if (!Number.isFinite(figure)) return '–';
  switch (unit) {
    case 'x':
      return `${figure.toFixed(2)}x`;
    case 'ms':
      return `${figure.toFixed(1)} ms`;
    case 'MB':
      return `${figure.toFixed(0)} MB`;
    case 'events/s':
      return `${figure.toFixed(0)} events/s`;
    case '%':
      return `${figure.toFixed(3)} %`;
    case '':
      return String(figure);
  }
}

import { constants, PerformanceObserver } from 'node:perf_hooks';
import { Gauge, Histogram, type Registry } from 'prom-client';

/*
 * Seconds the collector held the event loop. A scavenge takes 1 to 10 ms here, a full collection
 * of the service's 40 to 60 MB heap 20 to 100 ms on the benchmark's busy machine (docs/benchmarks.md,
 * "The tail under a burst"): fine buckets up to 100 ms, and 1 s for a process near its heap limit.
 */
export const GC_PAUSE_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];

const KINDS: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
};

/** What a 'gc' performance entry tells: its pause in ms, and its kind in `detail`. */
interface GcEntry {
  duration: number;
  detail?: unknown;
}

/** The recorder of GC pauses in `registry`: what the observer below feeds. */
export interface GcPauses {
  record(entries: readonly GcEntry[]): void;
}

/**
 * `gc_pause_seconds` (a histogram by kind) and `gc_pause_max_seconds` (the longest pause since the
 * last scrape), from every 'gc' entry Node reports.
 *
 * prom-client's own `nodejs_gc_duration_seconds` (its default metrics, kept) records only the
 * first entry of each batch the observer is given; under load a batch holds several collections,
 * and the one that held a request may be any of them. Its buckets (1 ms, 10 ms, 100 ms, 1 s) do
 * not tell a 20 ms pause from a 90 ms one either.
 */
export function registerGcPauses(registry: Registry, prefix: string): GcPauses {
  const pauses = new Histogram({
    name: `${prefix}gc_pause_seconds`,
    help: 'Garbage-collection pauses of the event loop, by kind: minor, major, incremental, weakcb',
    labelNames: ['kind'] as const,
    buckets: GC_PAUSE_BUCKETS,
    registers: [registry],
  });
  let longest = 0;
  new Gauge({
    name: `${prefix}gc_pause_max_seconds`,
    help: 'The longest garbage-collection pause since the last scrape (0 when none)',
    registers: [registry],
    collect() {
      this.set(longest);
      longest = 0;
    },
  });
  const recorder: GcPauses = {
    record(entries) {
      for (const { duration, detail } of entries) {
        const kind = KINDS[(detail as { kind?: number } | null)?.kind ?? -1] ?? 'unknown';
        const seconds = duration / 1000;
        pauses.observe({ kind }, seconds);
        longest = Math.max(longest, seconds);
      }
    },
  };
  new PerformanceObserver((list) => recorder.record(list.getEntries())).observe({
    entryTypes: ['gc'],
  });
  return recorder;
}

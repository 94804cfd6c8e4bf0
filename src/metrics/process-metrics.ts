import { collectDefaultMetrics, Gauge, type Registry } from 'prom-client';
import { registerGcPauses } from './gc-pauses';
import { containerMemoryLimit } from './memory-limit';
import { scrapeReading } from './scrape-reading';

// The metrics both processes (the server, the webhook worker) register, each in its own registry.

/** Every metric's name starts with it, prom-client's default ones included. */
export const METRIC_PREFIX = 'visitor_api_';

/**
 * prom-client's default metrics (event-loop lag, heap, GC, CPU, memory, file descriptors, all
 * computed at scrape time), every GC pause (gc-pauses.ts), and the container's memory limit when
 * it has one: what an alert compares the resident memory with. The server's and the webhook
 * worker's.
 */
export function registerProcessMetrics(
  registry: Registry,
  limit: number | undefined = containerMemoryLimit(),
): void {
  collectDefaultMetrics({ register: registry, prefix: METRIC_PREFIX });
  registerGcPauses(registry, METRIC_PREFIX);
  if (limit === undefined) return;
  new Gauge({
    name: `${METRIC_PREFIX}container_memory_limit_bytes`,
    help: "The memory limit of the process's container (cgroup); absent when it has none",
    registers: [registry],
  }).set(limit);
}

/** A gauge of what a scrape's database reading holds. */
export interface ReadingGauge<T> {
  name: string;
  help: string;
  value: (reading: T) => number;
}

/**
 * `database_up` and gauges of one database reading per scrape (scrape-reading.ts): up when it
 * answered within 2 s; each gauge keeps its last value while it does not. The server's reading
 * (the feeds' hold-back) and the webhook worker's (its backlog).
 */
export function registerReadingGauges<T>(
  registry: Registry,
  read: () => Promise<T>,
  upHelp: string,
  gauges: ReadingGauge<T>[],
): void {
  const scraped = scrapeReading(read);
  new Gauge({
    name: `${METRIC_PREFIX}database_up`,
    help: upHelp,
    registers: [registry],
    async collect() {
      this.set((await scraped()) === undefined ? 0 : 1);
    },
  });
  for (const { name, help, value } of gauges) {
    new Gauge({
      name: `${METRIC_PREFIX}${name}`,
      help: `${help}; the last value read while the database is unreachable`,
      registers: [registry],
      async collect() {
        const reading = await scraped();
        if (reading !== undefined) this.set(value(reading));
      },
    });
  }
}

import { Counter, Histogram, Registry } from 'prom-client';
import {
  METRIC_PREFIX,
  registerProcessMetrics,
  registerReadingGauges,
} from '../metrics/process-metrics';
import type { Backlog } from './sql/backlog.sql';
import type { RecordedOutcome } from './webhook-delivery';

/*
 * Seconds from an event's dispatch to its delivery: about 0.3 s at the median when the
 * receiver answers (docs/benchmarks.md, "Webhooks"), minutes to hours for the retries of a failing
 * receiver (the schedule's waits run from 1 minute to 12 hours): up to 6 hours and a day.
 */
export const DELIVERY_LAG_BUCKETS = [
  0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 21600, 86400,
];

/**
 * The webhook worker's metrics, on its METRICS_PORT: the attempts as they are recorded, and the
 * backlog read from the database when scraped. The backlog is every worker's (the database's), so
 * several workers report the same values: aggregate them with max, not sum.
 */
export class WorkerMetrics {
  readonly registry = new Registry();

  private readonly attempts = new Counter({
    name: `${METRIC_PREFIX}webhook_attempts_total`,
    help: 'Delivery attempts recorded, by outcome: delivered (2xx), failed, gone (410), refused',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  private readonly lag = new Histogram({
    name: `${METRIC_PREFIX}webhook_delivery_lag_seconds`,
    help: "From an event's dispatch to its delivery (the end of its first 2xx attempt)",
    buckets: DELIVERY_LAG_BUCKETS,
    registers: [this.registry],
  });

  constructor(readBacklog: () => Promise<Backlog>) {
    registerProcessMetrics(this.registry);
    // Every outcome from the start, so that a rate over them is 0 rather than absent.
    for (const outcome of ['delivered', 'failed', 'gone', 'refused'] as const) {
      this.attempts.inc({ outcome }, 0);
    }
    registerReadingGauges(
      this.registry,
      readBacklog,
      'Whether the backlog could be read from the database at this scrape (1) or not (0)',
      [
        {
          name: 'webhook_events_pending',
          help: 'Events waiting for delivery, their scheduled retries included',
          value: (backlog) => backlog.pending,
        },
        {
          name: 'webhook_events_due',
          help: 'Pending events due now, not yet attempted',
          value: (backlog) => backlog.due,
        },
        {
          name: 'webhook_oldest_due_event_seconds',
          help: 'How long the oldest due event has waited past its time (0 when none is due)',
          value: (backlog) => backlog.oldest_due_seconds,
        },
        {
          name: 'webhook_endpoints_disabled',
          help: 'Endpoints disabled (410 Gone, or 3 days of failures)',
          value: (backlog) => backlog.disabled_endpoints,
        },
      ],
    );
  }

  /** One attempt, once recorded; `lagSeconds` from its event's dispatch. */
  recorded(outcome: RecordedOutcome, lagSeconds: number): void {
    this.attempts.inc({ outcome });
    if (outcome === 'delivered') this.lag.observe(Math.max(0, lagSeconds));
  }
}

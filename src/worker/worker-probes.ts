import type { Pool } from 'pg';
import { type PingOutcome, pingOutcome } from '../health/ping-check';
import type { ProbeAnswer } from '../metrics/metrics-server';

// As the server's readiness (src/health): a database that hangs gives a quick 503, not a probe
// that hangs with it.
const DATABASE_TIMEOUT_MS = 2_000;

/**
 * The webhook worker's probes, on its METRICS_PORT, in the server's shapes (docs/api.md, "Health"):
 * live while the process answers (a restart cures no database outage); ready while it takes jobs
 * (started, not draining) and its database answers `SELECT 1` within 2 seconds.
 */
export function workerProbes(
  pool: Pick<Pool, 'query'>,
  running: () => boolean,
): Record<string, () => Promise<ProbeAnswer>> {
  return {
    '/health/live': () =>
      Promise.resolve({ status: 200, body: { status: 'ok', info: {}, error: {}, details: {} } }),
    '/health/ready': async () => {
      const details: Record<string, PingOutcome> = {
        worker: running() ? { status: 'up' } : { status: 'down', message: 'not taking jobs' },
        database: await pingOutcome(() => pool.query('SELECT 1'), DATABASE_TIMEOUT_MS),
      };
      const up = Object.values(details).every((check) => check.status === 'up');
      const part = (status: PingOutcome['status']) =>
        Object.fromEntries(Object.entries(details).filter(([, check]) => check.status === status));
      return {
        status: up ? 200 : 503,
        body: { status: up ? 'ok' : 'error', info: part('up'), error: part('down'), details },
      };
    },
  };
}

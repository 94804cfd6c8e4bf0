import { rowsOf, type PoolOrClient } from '../../database/rows';

/**
 * The delivery backlog, every endpoint together, for the worker's metrics: the pending events
 * (their retries scheduled included), those due now, how long the oldest due one has waited past
 * its time, and the endpoints disabled. One statement per scrape, on the pending events only (a
 * partial index: migration 20261130000000_webhook_backlog). $1 now.
 */
const BACKLOG_SQL = `SELECT
  count(*)::int AS pending,
  count(*) FILTER (WHERE next_attempt_at <= $1)::int AS due,
  coalesce(extract(epoch FROM $1 - min(next_attempt_at) FILTER (WHERE next_attempt_at <= $1)), 0)
    ::float8 AS oldest_due_seconds,
  (SELECT count(*) FROM webhook_endpoints WHERE NOT enabled)::int AS disabled_endpoints
FROM webhook_events WHERE state = 'pending'`;

export interface Backlog {
  pending: number;
  due: number;
  oldest_due_seconds: number;
  disabled_endpoints: number;
}

export async function readBacklog(client: PoolOrClient, now: Date): Promise<Backlog> {
  const [row] = await rowsOf<Backlog>(client, BACKLOG_SQL, [now]);
  return row;
}

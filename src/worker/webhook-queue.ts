import type PgBoss from 'pg-boss';
import type { PoolClient } from 'pg';

/** The pg-boss queue of delivery jobs: one job per attempt to make, `{ eventId }`. */
export const DELIVERY_QUEUE = 'webhook-delivery';

export interface DeliveryJob {
  eventId: string;
}

/** pg-boss's executor over a client in a transaction: a job sent through it commits with it. */
export function inTransaction(client: PoolClient): PgBoss.Db {
  return { executeSql: (text, values) => client.query(text, values) };
}

/**
 * How jobs of the queue behave. A job whose worker died (killed mid-delivery) is active until it
 * expires, then pg-boss retries it: the expiry is the event's lease, so that the retried job
 * finds the event free. Retries of a job are always safe (the event's state and lease decide
 * whether anything is sent), so they are many and quick; the webhook schedule is not pg-boss's
 * retry but a new job with its own start time.
 */
export function jobOptions(
  leaseMs: number,
): Pick<PgBoss.JobInsert, 'expireInSeconds' | 'retryLimit' | 'retryDelay'> {
  return { expireInSeconds: Math.ceil(leaseMs / 1000), retryLimit: 1_000, retryDelay: 1 };
}

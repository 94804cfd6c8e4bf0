import { randomBytes } from 'node:crypto';
import type PgBoss from 'pg-boss';
import type { Pool, PoolClient } from 'pg';
import type { Clock } from '../common/clock';
import {
  eventBody,
  WEBHOOK_FEEDS,
  type EventType,
  type WebhookFeed,
} from '../webhooks/webhook-events';
import { pathRange } from '../items/page-patterns';
import { DELIVERY_QUEUE, inTransaction, jobOptions } from './webhook-queue';
import {
  advanceEndpoint,
  claimEndpointAfter,
  type DispatchedEndpoint,
  feedChangesAfter,
  insertEvents,
  type PageFilter,
  resumePaused,
} from './sql/dispatch.sql';

/** Changes read per feed and endpoint in one transaction. */
export const DISPATCH_BATCH = 500;

/**
 * Turns changes into events. Each enabled endpoint is read like a feed client: the changes of its
 * workspace past its position and below the safe bound, one event per change of a subscribed
 * type, each event's delivery job queued, and the position advanced, all in one transaction.
 * Whatever stops in between, a change is either before the position with its event and job
 * committed, or after it and read again. The endpoint's row is locked for that transaction, so
 * several workers never dispatch one endpoint at once.
 *
 * Changes of one item that the dispatcher reads together are one event carrying the item's
 * current state, as in the feeds (the change tables keep one row per item).
 *
 * A feed that the endpoint takes no event type of is not read (its position stays where it is):
 * the visits' feed, the busiest, costs nothing to the endpoints of companies and leads. An
 * endpoint with page patterns is sent the visit events whose visit matches one (a change that
 * matches none is passed over, its position advanced all the same).
 */
export class WebhookDispatcher {
  constructor(
    private readonly pool: Pool,
    private readonly boss: PgBoss,
    private readonly clock: Clock,
    private readonly leaseMs: number,
    private readonly visitRetentionDays: number,
  ) {}

  /**
   * One pass over every enabled endpoint; resolves to the number of changes read and events
   * queued (a pass that read none found nothing to do).
   */
  async dispatchAll(): Promise<number> {
    let after = '';
    let work = 0;
    for (;;) {
      const dispatched = await this.dispatchNext(after);
      if (!dispatched) return work;
      after = dispatched.endpointId;
      work += dispatched.work;
    }
  }

  private async dispatchNext(after: string): Promise<{ endpointId: string; work: number } | null> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const endpoint = await claimEndpointAfter(client, after);
      if (endpoint === undefined) {
        await client.query('COMMIT');
        return null;
      }
      const now = new Date(this.clock.now());
      const ids = await resumePaused(client, endpoint.id, now);
      let changes = 0;
      const filter: PageFilter = {
        ranges: endpoint.pages === null ? null : rangesOf(endpoint.pages),
        visitRetentionDays: this.visitRetentionDays,
      };
      for (const feed of WEBHOOK_FEEDS) {
        if (![feed.upserted, feed.deleted].some((type) => endpoint.event_types.includes(type))) {
          continue;
        }
        const read = await this.dispatchFeed(client, endpoint, feed, { now, filter });
        changes += read.changes;
        ids.push(...read.events);
      }
      if (ids.length > 0) {
        const options = jobOptions(this.leaseMs);
        await this.boss.insert(
          ids.map((eventId) => ({ name: DELIVERY_QUEUE, data: { eventId }, ...options })),
          { db: inTransaction(client) },
        );
      }
      await client.query('COMMIT');
      return { endpointId: endpoint.id, work: changes + ids.length };
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  /** The events of one feed's changes past the endpoint's position; advances the position. */
  private async dispatchFeed(
    client: PoolClient,
    endpoint: DispatchedEndpoint,
    feed: WebhookFeed,
    { now, filter }: { now: Date; filter: PageFilter },
  ): Promise<{ changes: number; events: string[] }> {
    const read = {
      workspaceId: endpoint.workspace_id,
      txid: endpoint[feed.txidColumn],
      id: endpoint[feed.idColumn],
      limit: DISPATCH_BATCH,
    };
    const rows = await feedChangesAfter(client, feed, read, filter);
    if (rows.length === 0) return { changes: 0, events: [] };
    const ids: string[] = [];
    const types: EventType[] = [];
    const bodies: string[] = [];
    for (const change of rows) {
      if (!change.matched) continue;
      const type = change.item === null ? feed.deleted : feed.upserted;
      if (!endpoint.event_types.includes(type)) continue;
      const id = `evt_${randomBytes(15).toString('base64url')}`;
      ids.push(id);
      types.push(type);
      bodies.push(eventBody(id, type, now, change.item ?? JSON.stringify({ id: change.id })));
    }
    if (ids.length > 0) await insertEvents(client, endpoint.id, { ids, types, bodies }, now);
    const last = rows[rows.length - 1];
    await advanceEndpoint(client, feed, endpoint.id, last);
    return { changes: rows.length, events: ids };
  }
}

/** The path ranges of page patterns, as the statements bind them (items/page-patterns.ts). */
function rangesOf(patterns: string[]): { from: string[]; to: string[] } {
  const ranges = patterns.map(pathRange);
  return { from: ranges.map(([from]) => from), to: ranges.map(([, to]) => to) };
}

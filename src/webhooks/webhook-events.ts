import type { FeedTable } from '../changes/change-feed-sql';
import type { ItemSelect } from '../items/item-sql';
import { COMPANY_ITEM } from '../companies/companies.sql';
import { LEAD_ITEM } from '../leads/leads.sql';
import { visitItem } from '../visits/visits.sql';

/** The event types, one upsert and one delete per change feed. */
export const EVENT_TYPES = [
  'company.upserted',
  'company.deleted',
  'lead.upserted',
  'lead.deleted',
  'visit.upserted',
  'visit.deleted',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/**
 * The types an endpoint takes when created without `--events`: those of companies and leads.
 * The visit events come only when asked for: an endpoint made before them, or without naming
 * them, is not flooded with a visit per session.
 */
export const DEFAULT_EVENT_TYPES: readonly EventType[] = [
  'company.upserted',
  'company.deleted',
  'lead.upserted',
  'lead.deleted',
];

/** The types that an endpoint's page patterns (`--pages`) filter. */
export const PAGE_FILTERED_TYPES: readonly EventType[] = ['visit.upserted', 'visit.deleted'];

/** A change feed as webhook dispatch reads it: its table of positions and its item's JSON. */
export interface WebhookFeed extends ItemSelect, FeedTable {
  /** The endpoint's columns holding its position in this feed. */
  txidColumn: 'company_txid' | 'lead_txid' | 'visit_txid';
  idColumn: 'company_id' | 'lead_id' | 'visit_id';
  upserted: EventType;
  deleted: EventType;
  /**
   * The visits': an endpoint's page patterns filter its events, and its statement takes the
   * patterns' ranges ($5, $6: text[], null without patterns) and the retention in days ($7).
   */
  pageFiltered?: true;
}

export const WEBHOOK_FEEDS: readonly WebhookFeed[] = [
  {
    ...COMPANY_ITEM,
    changeTable: 'company_changes',
    txidColumn: 'company_txid',
    idColumn: 'company_id',
    upserted: 'company.upserted',
    deleted: 'company.deleted',
  },
  {
    ...LEAD_ITEM,
    changeTable: 'lead_changes',
    txidColumn: 'lead_txid',
    idColumn: 'lead_id',
    upserted: 'lead.upserted',
    deleted: 'lead.deleted',
  },
  {
    // The feed of GET /v1/visits/changes: each visit looked up in its month, a visit past the
    // retention left out (GET /v1/visits/{id} answers 404 for it).
    ...visitItem(),
    partitionKey: 'started_at',
    changeTable: 'visit_changes',
    retained: (alias) => `${alias}.started_at >= now() - make_interval(days => $7::integer)`,
    txidColumn: 'visit_txid',
    idColumn: 'visit_id',
    upserted: 'visit.upserted',
    deleted: 'visit.deleted',
    pageFiltered: true,
  },
];

/**
 * The body of an event, as sent and signed: `data` is the item's JSON text as the API returns it,
 * or `{"id": ...}` for a deletion. Written as text so that the item's JSON from PostgreSQL is
 * neither parsed nor re-serialized.
 */
export function eventBody(id: string, type: EventType, createdAt: Date, data: string): string {
  return `{"id":${JSON.stringify(id)},"type":"${type}","createdAt":"${createdAt.toISOString()}","data":${data}}`;
}

import type { ItemSelect } from '../items/item-sql';
import { COMPANY_ITEM } from '../companies/companies.sql';
import { LEAD_ITEM } from '../leads/leads.sql';

/** The event types, one upsert and one delete per change feed. */
export const EVENT_TYPES = [
  'company.upserted',
  'company.deleted',
  'lead.upserted',
  'lead.deleted',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/** A change feed as webhook dispatch reads it: its table of positions and its item's JSON. */
export interface WebhookFeed extends ItemSelect {
  changeTable: string;
  /** The endpoint's columns holding its position in this feed. */
  txidColumn: string;
  idColumn: string;
  upserted: EventType;
  deleted: EventType;
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
];

/**
 * The body of an event, as sent and signed: `data` is the item's JSON text as the API returns it,
 * or `{"id": ...}` for a deletion. Written as text so that the item's JSON from PostgreSQL is
 * neither parsed nor re-serialized.
 */
export function eventBody(id: string, type: EventType, createdAt: Date, data: string): string {
  return `{"id":${JSON.stringify(id)},"type":"${type}","createdAt":"${createdAt.toISOString()}","data":${data}}`;
}

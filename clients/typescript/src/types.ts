import type { components, operations } from './schema.js';

// The shapes come from the service's OpenAPI document (schema.ts, generated): when the contract
// changes, regenerating it makes the compiler point at every use that no longer fits.
type Schemas = components['schemas'];

export type Workspace = Schemas['WorkspaceDto'];
export type Company = Schemas['CompanyDto'];
export type Contact = Schemas['ContactDto'];
export type Lead = Schemas['LeadDto'];
export type CompanyPage = Schemas['CompanyPageDto'];
export type LeadPage = Schemas['LeadPageDto'];
export type ErrorEnvelope = Schemas['ErrorEnvelopeDto'];

type QueryOf<O extends keyof operations> = NonNullable<operations[O]['parameters']['query']>;

/**
 * The query of the companies list: `limit` 1..200, `offset` >= 0, `since` (also a `Date`), and the
 * filters `intentLevel`, `crmStatus` (arrays: any of the values), `minIntentScore`, `country`.
 */
export type CompanyListParams = Omit<QueryOf<'listCompanies'>, 'since'> & { since?: Date | string };
/** The query of the leads list: the same, with `intentLevel`, `status`, `minIntentScore`, `assignedToId`. */
export type LeadListParams = Omit<QueryOf<'listLeads'>, 'since'> & { since?: Date | string };
/** The parameters both lists share. */
export type ListParams = Pick<
  CompanyListParams,
  'limit' | 'offset' | 'since' | 'intentLevel' | 'minIntentScore'
>;

/** A feed's upsert: the item was created or changed; `company` is as it is now. */
export type CompanyUpsert = Schemas['CompanyUpsertedDto'];
/** A feed's upsert: the lead was created or changed; `lead` is as it is now. */
export type LeadUpsert = Schemas['LeadUpsertedDto'];
/** A feed's delete: the item no longer exists (a company's deletion deletes its leads too). */
export type ItemDeletion = Schemas['ItemDeletedDto'];

/** One entry of the company change feed: tell them apart by `op`. */
export type CompanyChange = CompanyUpsert | ItemDeletion;
/** One entry of the lead change feed: tell them apart by `op`. */
export type LeadChange = LeadUpsert | ItemDeletion;

/**
 * A page of a change feed, as the API sends it: apply `data` in order, then store `nextCursor`.
 * `hasMore` false: caught up (poll later with `nextCursor`).
 */
export interface ChangePage<C> {
  data: C[];
  nextCursor: string;
  hasMore: boolean;
}

export type CompanyChangePage = Schemas['CompanyChangePageDto'];
export type LeadChangePage = Schemas['LeadChangePageDto'];

/** The query of both feeds: `cursor` a stored `nextCursor` (none: from the start), `limit` 1..1000. */
export type ChangesParams = NonNullable<operations['companyChanges']['parameters']['query']>;

/** What the stream iterators take (`Client.companyChangeStream`, `Client.leadChangeStream`). */
export type ChangeStreamOptions = Omit<ChangeFeedOptions, 'limit'>;

/** What the feed iterators take (`Client.companyChanges`, `Client.leadChanges`). */
export interface ChangeFeedOptions {
  /** A `nextCursor` stored after applying its page; none: from the start, every live item. */
  cursor?: string;
  /** Changes per request, 1..1000. Default 1000 (`CHANGES_PAGE_SIZE`): the fewest requests. */
  limit?: number;
  /**
   * How many times in a row to wait, with backoff, while changes are held back behind an older
   * transaction (an empty page with `hasMore`), before yielding that empty page and ending. Default
   * 10, about two minutes with the default backoff.
   */
  maxWaits?: number;
}

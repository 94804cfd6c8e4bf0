import type { components, operations } from './schema.js';

// The shapes come from the service's OpenAPI document (schema.ts, generated): when the contract
// changes, regenerating it makes the compiler point at every use that no longer fits.
type Schemas = components['schemas'];

export type Workspace = Schemas['WorkspaceDto'];
export type Company = Schemas['CompanyDto'];
export type Contact = Schemas['ContactDto'];
export type Lead = Schemas['LeadDto'];
export type ErrorEnvelope = Schemas['ErrorEnvelopeDto'];

type QueryOf<O extends keyof operations> = NonNullable<operations[O]['parameters']['query']>;

/**
 * A name `fields` takes for companies: a company's field, `contacts` (each contact whole) or
 * `contacts.<field>` (each contact with that field and its id). From the OpenAPI document's
 * enumeration.
 */
export type CompanyField = NonNullable<QueryOf<'listCompanies'>['fields']>[number];
/** A name `fields` takes for leads: a lead's field. */
export type LeadField = NonNullable<QueryOf<'listLeads'>['fields']>[number];

/** The contact fields that `F` names as `contacts.<field>`. */
type ContactFieldsOf<F> = F extends `contacts.${infer C}` ? Extract<C, keyof Contact> : never;

/** A company's contacts as a selection `F` returns them: whole, by field, or not at all. */
type SelectedContacts<F extends CompanyField> = 'contacts' extends F
  ? { contacts: Contact[] }
  : [ContactFieldsOf<F>] extends [never]
    ? unknown
    : { contacts: Pick<Contact, 'id' | ContactFieldsOf<F>>[] };

/**
 * A company as a read with `fields: F` returns it: the fields named, and its id (`Pick`-style);
 * `Company` itself without `fields` (`F` never).
 */
export type SelectedCompany<F extends CompanyField = never> = [F] extends [never]
  ? Company
  : Pick<Company, 'id' | Extract<F, Exclude<keyof Company, 'contacts'>>> & SelectedContacts<F>;

/** A lead as a read with `fields: F` returns it: the fields named and its id; `Lead` without. */
export type SelectedLead<F extends LeadField = never> = [F] extends [never]
  ? Lead
  : Pick<Lead, 'id' | F>;

/** A page of a list: `total` counts every match, across pages. */
export interface Page<T> {
  total: number;
  limit: number;
  offset: number;
  data: T[];
}

export type CompanyPage<F extends CompanyField = never> = Page<SelectedCompany<F>>;
export type LeadPage<F extends LeadField = never> = Page<SelectedLead<F>>;

/** `fields`, as the client takes it: the names, each item then has only those and its id. */
export interface FieldsParam<F extends string> {
  fields?: readonly F[];
}

/**
 * The query of the companies list: `limit` 1..200, `offset` >= 0, `since` (also a `Date`), the
 * filters `intentLevel`, `crmStatus` (arrays: any of the values), `minIntentScore`, `country`, the
 * lookups `domain` (an array: any of the domains) and `q` (a text in the name or domain), and
 * `fields` (the items' fields to return).
 */
export type CompanyListParams<F extends CompanyField = CompanyField> = Omit<
  QueryOf<'listCompanies'>,
  'since' | 'fields'
> & { since?: Date | string } & FieldsParam<F>;
/**
 * The query of the leads list: the same, with `intentLevel`, `status`, `minIntentScore`,
 * `assignedToId`, and `fields`.
 */
export type LeadListParams<F extends LeadField = LeadField> = Omit<
  QueryOf<'listLeads'>,
  'since' | 'fields'
> & { since?: Date | string } & FieldsParam<F>;
/** The parameters both lists share. */
export type ListParams = Pick<
  CompanyListParams,
  'limit' | 'offset' | 'since' | 'intentLevel' | 'minIntentScore'
>;

/** A feed's upsert: the item was created or changed; `company` is as it is now (with `fields`: those). */
export type CompanyUpsert<F extends CompanyField = never> = Omit<
  Schemas['CompanyUpsertedDto'],
  'company'
> & { company: SelectedCompany<F> };
/** A feed's upsert: the lead was created or changed; `lead` is as it is now (with `fields`: those). */
export type LeadUpsert<F extends LeadField = never> = Omit<Schemas['LeadUpsertedDto'], 'lead'> & {
  lead: SelectedLead<F>;
};
/** A feed's delete: the item no longer exists (a company's deletion deletes its leads too). */
export type ItemDeletion = Schemas['ItemDeletedDto'];

/** One entry of the company change feed: tell them apart by `op`. */
export type CompanyChange<F extends CompanyField = never> = CompanyUpsert<F> | ItemDeletion;
/** One entry of the lead change feed: tell them apart by `op`. */
export type LeadChange<F extends LeadField = never> = LeadUpsert<F> | ItemDeletion;

/**
 * A page of a change feed, as the API sends it: apply `data` in order, then store `nextCursor`.
 * `hasMore` false: caught up (poll later with `nextCursor`).
 */
export interface ChangePage<C> {
  data: C[];
  nextCursor: string;
  hasMore: boolean;
}

export type CompanyChangePage<F extends CompanyField = never> = ChangePage<CompanyChange<F>>;
export type LeadChangePage<F extends LeadField = never> = ChangePage<LeadChange<F>>;

/**
 * The query of both feeds: `cursor` a stored `nextCursor` (none: from the start), `limit` 1..1000,
 * and `fields`.
 */
export type ChangesParams<F extends string = never> = Omit<
  NonNullable<operations['companyChanges']['parameters']['query']>,
  'fields'
> &
  FieldsParam<F>;

/** What the stream iterators take (`Client.companyChangeStream`, `Client.leadChangeStream`). */
export type ChangeStreamOptions<F extends string = never> = Omit<ChangeFeedOptions<F>, 'limit'>;

/** What the feed iterators take (`Client.companyChanges`, `Client.leadChanges`). */
export interface ChangeFeedOptions<F extends string = never> extends FieldsParam<F> {
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

import type { components, operations } from './schema.js';

// The shapes come from the service's OpenAPI document (schema.ts, generated): when the contract
// changes, regenerating it makes the compiler point at every use that no longer fits.
type Schemas = components['schemas'];

export type Workspace = Schemas['WorkspaceDto'];
export type Company = Schemas['CompanyDto'];
export type Contact = Schemas['ContactDto'];
export type Lead = Schemas['LeadDto'];
/** A visit with its page views, as GET /v1/visits/{id} returns it (and a visit webhook's data). */
export type Visit = Schemas['VisitDto'];
export type PageView = Schemas['PageViewDto'];
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
/**
 * A name `fields` takes for visits: a visit's field, `pages` (each page view whole) or
 * `pages.<field>` (each page view with that field).
 */
export type VisitField = NonNullable<QueryOf<'listVisits'>['fields']>[number];

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

/** The page view fields that `F` names as `pages.<field>`. */
type PageViewFieldsOf<F> = F extends `pages.${infer P}` ? Extract<P, keyof PageView> : never;

/** A visit's pages as a selection `F` returns them: whole, by field (a page view has no id), or not at all. */
type SelectedPages<F extends VisitField> = 'pages' extends F
  ? { pages: PageView[] }
  : [PageViewFieldsOf<F>] extends [never]
    ? unknown
    : { pages: Pick<PageView, PageViewFieldsOf<F>>[] };

/** A visit as a read with `fields: F` returns it: the fields named and its id; `Visit` without. */
export type SelectedVisit<F extends VisitField = never> = [F] extends [never]
  ? Visit
  : Pick<Visit, 'id' | Extract<F, Exclude<keyof Visit, 'pages'>>> & SelectedPages<F>;

/** A page of a list: `total` counts every match, across pages. */
export interface Page<T> {
  total: number;
  limit: number;
  offset: number;
  data: T[];
}

export type CompanyPage<F extends CompanyField = never> = Page<SelectedCompany<F>>;
export type LeadPage<F extends LeadField = never> = Page<SelectedLead<F>>;

/**
 * A page of a list paged by cursor (the visits): while `hasMore`, send `nextCursor` as `cursor`
 * with the same filters for the next page; `nextCursor` is null on the last.
 */
export interface CursorPage<T> {
  data: T[];
  nextCursor: string | null;
  hasMore: boolean;
}

export type VisitPage<F extends VisitField = never> = CursorPage<SelectedVisit<F>>;

/** `fields`, as the client takes it: the names, each item then has only those and its id. */
export interface FieldsParam<F extends string> {
  fields?: readonly F[];
}

/**
 * The query of the companies list: `limit` 1..200, `offset` >= 0, `since` (also a `Date`), the
 * filters `intentLevel`, `crmStatus` (arrays: any of the values), `minIntentScore`, `country`, the
 * lookups `domain` (an array: any of the domains) and `q` (a text in the name or domain),
 * `visitedPage` (page patterns: the companies that viewed a matching page at or after
 * `visitedSince`, also a `Date`; needs the `visits:read` scope), and `fields` (the items' fields
 * to return).
 */
export type CompanyListParams<F extends CompanyField = CompanyField> = Omit<
  QueryOf<'listCompanies'>,
  'since' | 'visitedSince' | 'fields'
> & { since?: Date | string; visitedSince?: Date | string } & FieldsParam<F>;
/**
 * The query of the leads list: the same, with `intentLevel`, `status`, `minIntentScore`,
 * `assignedToId`, and `fields`.
 */
export type LeadListParams<F extends LeadField = LeadField> = Omit<
  QueryOf<'listLeads'>,
  'since' | 'fields'
> & { since?: Date | string } & FieldsParam<F>;
/**
 * The query of the company's visits list: `limit` 1..200, `cursor` (a `nextCursor` of the same
 * list and filters), `since` and `until` bounding `startedAt` (also `Date`s), `page` (page
 * patterns: the visits with a matching page view), and `fields`.
 */
export type CompanyVisitListParams<F extends VisitField = VisitField> = Omit<
  QueryOf<'listCompanyVisits'>,
  'since' | 'until' | 'fields'
> & { since?: Date | string; until?: Date | string } & FieldsParam<F>;
/** The query of the visits list: the same, and `companyId` (an array: the visits of any of them). */
export type VisitListParams<F extends VisitField = VisitField> = CompanyVisitListParams<F> &
  Pick<QueryOf<'listVisits'>, 'companyId'>;

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
/** A feed's upsert: the visit was written; `visit` is as it is now, pages included (with `fields`: those). */
export type VisitUpsert<F extends VisitField = never> = Omit<
  Schemas['VisitUpsertedDto'],
  'visit'
> & {
  visit: SelectedVisit<F>;
};
/** A feed's delete: the item no longer exists (a company's deletion deletes its leads and visits too). */
export type ItemDeletion = Schemas['ItemDeletedDto'];

/** One entry of the company change feed: tell them apart by `op`. */
export type CompanyChange<F extends CompanyField = never> = CompanyUpsert<F> | ItemDeletion;
/** One entry of the lead change feed: tell them apart by `op`. */
export type LeadChange<F extends LeadField = never> = LeadUpsert<F> | ItemDeletion;
/**
 * One entry of the visit change feed: tell them apart by `op`. A visit that leaves by the
 * retention gets no delete: a copy drops its visits that started before the retention itself.
 */
export type VisitChange<F extends VisitField = never> = VisitUpsert<F> | ItemDeletion;

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
export type VisitChangePage<F extends VisitField = never> = ChangePage<VisitChange<F>>;

/**
 * The query of the feeds: `cursor` a stored `nextCursor` (none: from the start), `limit` 1..1000,
 * and `fields`.
 */
export type ChangesParams<F extends string = never> = Omit<
  NonNullable<operations['companyChanges']['parameters']['query']>,
  'fields'
> &
  FieldsParam<F>;

/** What the stream iterators take (`Client.companyChangeStream` and the others). */
export type ChangeStreamOptions<F extends string = never> = Omit<ChangeFeedOptions<F>, 'limit'>;

/** What the feed iterators take (`Client.companyChanges` and the others). */
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

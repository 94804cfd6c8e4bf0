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

type ListQuery = NonNullable<operations['listCompanies']['parameters']['query']>;

/** The query of both lists (`limit` 1..200, `offset` >= 0); `since` may also be a `Date`. */
export type ListParams = Omit<ListQuery, 'since'> & { since?: Date | string };

/*
 * docs/openapi.json as a generated client reads it (docs/api.md, "Generated clients and
 * `fields`"): openapi-typescript's types of the document (clients/typescript/src/schema.ts, which
 * .ci/check-openapi-tools and clients/typescript/test/schema.spec.ts keep equal to what it generates now)
 * through openapi-fetch, the pair the README names. Checked by the compiler, never run: each line
 * compiles only while the document types what docs/api.md says, so a change of the document that
 * loosens a type fails `npm run typecheck` and that check.
 */
import createClient from 'openapi-fetch';
import type { components, paths } from '../../clients/typescript/src/schema';

type Schemas = components['schemas'];

/** True when A and B are the same type (not merely assignable one to the other). */
type Equal<A, B> =
  (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
/** No argument when the proof holds; an argument of type never (which none is) when it fails. */
type Proof<P extends boolean> = P extends true ? [] : [never];

function expectType<Actual>(_value: Actual) {
  return { is: <Expected>(..._proof: Proof<Equal<Actual, Expected>>) => undefined };
}
function expectTrue<P extends boolean>(..._proof: Proof<P>) {
  return undefined;
}

/** The keys of T whose property is required (not `?`). */
type RequiredKeys<T> = { [K in keyof T]-?: object extends Pick<T, K> ? never : K }[keyof T];
/** Every property of T is required: what the whole objects promise. */
type AllRequired<T> = Equal<RequiredKeys<T>, keyof T>;

type Company = Schemas['CompanyDto'];
type Lead = Schemas['LeadDto'];
type Visit = Schemas['VisitDto'];

// The whole objects: every field present (a nullable one as null), as a read without `fields`
// returns them.
expectTrue<AllRequired<Company>>();
expectTrue<AllRequired<Schemas['ContactDto']>>();
expectTrue<AllRequired<Lead>>();
expectTrue<AllRequired<Visit>>();
expectTrue<AllRequired<Schemas['PageViewDto']>>();
// With `fields`, only `id` is sure to be there.
expectTrue<Equal<RequiredKeys<Schemas['SelectedCompanyDto']>, 'id'>>();
expectTrue<Equal<RequiredKeys<Schemas['SelectedLeadDto']>, 'id'>>();
expectTrue<Equal<RequiredKeys<Schemas['SelectedVisitDto']>, 'id'>>();

export async function aGeneratedClient(baseUrl: string, key: string): Promise<void> {
  const api = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${key}` } });

  // An item of a read is whole or field-selected: the document's union, one type per operation.
  const { data: page } = await api.GET('/v1/companies', { params: { query: { limit: 50 } } });
  if (!page) return;
  expectType(page.data[0]).is<Company | Schemas['SelectedCompanyDto']>();

  // docs/api.md's snippet: without `fields` every item is whole, said once.
  const companies = page.data as Company[];
  expectType(companies[0].intentScore).is<number>();
  expectType(companies[0].siren).is<string | null>();
  expectType(companies[0].contacts[0].email).is<string | null>();

  // With `fields`: the fields named, and the id.
  const { data: named } = await api.GET('/v1/companies', {
    params: { query: { fields: ['name', 'intentScore'] } },
  });
  const selected = (named?.data ?? []) as Pick<Company, 'id' | 'name' | 'intentScore'>[];
  expectType(selected[0].intentScore).is<number>();

  // The same for every read that takes `fields`: single items, the other lists, the feeds.
  const { data: one } = await api.GET('/v1/companies/{id}', {
    params: { path: { id: 'co_000001' } },
  });
  expectType(one!).is<Company | Schemas['SelectedCompanyDto']>();
  expectType((one as Company).visitsCount).is<number>();

  const { data: leads } = await api.GET('/v1/leads');
  expectType(leads!.data[0]).is<Lead | Schemas['SelectedLeadDto']>();
  expectType((leads!.data as Lead[])[0].intentScore).is<number>();

  const { data: lead } = await api.GET('/v1/leads/{id}', { params: { path: { id: 'ld_000001' } } });
  expectType(lead!).is<Lead | Schemas['SelectedLeadDto']>();

  const { data: visits } = await api.GET('/v1/visits');
  expectType(visits!.data[0]).is<Visit | Schemas['SelectedVisitDto']>();
  expectType((visits!.data as Visit[])[0].startedAt).is<string>();

  const { data: visit } = await api.GET('/v1/visits/{id}', { params: { path: { id: 'vi_1' } } });
  expectType(visit!).is<Visit | Schemas['SelectedVisitDto']>();

  const { data: changes } = await api.GET('/v1/companies/changes');
  for (const change of changes!.data) {
    if (change.op === 'upsert') {
      expectType(change.company).is<Company | Schemas['SelectedCompanyDto']>();
      expectType((change.company as Company).intentScore).is<number>();
    }
  }
}

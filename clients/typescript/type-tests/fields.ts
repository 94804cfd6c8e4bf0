/*
 * The client's `fields` narrowing, checked by the compiler (`npm run typecheck`): each line below
 * compiles only while the returned types are the fields asked for, `Pick`-style. Never run.
 */
import type { Client, Company, Contact, Lead, PageView, Visit } from '../src/index.js';

/** True when A and B are the same type (not merely assignable one to the other). */
type Equal<A, B> =
  (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
/** No argument when the proof holds; an argument of type never (which none is) when it fails. */
type Proof<P extends boolean> = P extends true ? [] : [never];

/** `expectType(value).is<T>()` and `.hasKeys<K>()` compile only when the value's type is T, has keys K. */
function expectType<Actual>(_value: Actual) {
  return {
    is: <Expected>(..._proof: Proof<Equal<Actual, Expected>>) => undefined,
    hasKeys: <Keys>(..._proof: Proof<Equal<keyof Actual, Keys>>) => undefined,
  };
}

export async function fieldsNarrowTheTypes(client: Client): Promise<void> {
  // Without fields: the whole item, as before.
  expectType((await client.listCompanies()).data).is<Company[]>();
  expectType(await client.getLead('ld_1')).is<Lead>();

  // Top-level fields and contacts by field: those, and the ids.
  const page = await client.listCompanies({ fields: ['name', 'domain', 'contacts.email'] });
  const [company] = page.data;
  if (company === undefined) return;
  expectType(company).hasKeys<'id' | 'name' | 'domain' | 'contacts'>();
  expectType(company.name).is<string>();
  expectType(company.contacts[0]!).hasKeys<'id' | 'email'>();
  // @ts-expect-error: not asked for.
  void company.intentScore;

  // `contacts` whole: each contact whole.
  const withContacts = await client.getCompany('co_1', { fields: ['contacts'] });
  expectType(withContacts.contacts).is<Contact[]>();
  expectType(withContacts).hasKeys<'id' | 'contacts'>();

  // No contacts named: no contacts.
  expectType(await client.getCompany('co_1', { fields: ['intentScore'] })).hasKeys<
    'id' | 'intentScore'
  >();

  // Leads, feeds and streams alike.
  expectType((await client.listLeads({ fields: ['status'] })).data[0]!).hasKeys<'id' | 'status'>();
  for await (const changes of client.companyChangeStream({ fields: ['name'] })) {
    for (const change of changes.data) {
      if (change.op === 'upsert') expectType(change.company).hasKeys<'id' | 'name'>();
    }
  }
  for await (const changes of client.leadChanges({ fields: ['companyName'] })) {
    for (const change of changes.data) {
      if (change.op === 'upsert') expectType(change.lead).hasKeys<'id' | 'companyName'>();
    }
  }
  for await (const each of client.companies({ fields: ['lastSeen'] })) {
    expectType(each).hasKeys<'id' | 'lastSeen'>();
  }

  // Visits: their pages whole, by field (a page view has no id), or not at all.
  expectType((await client.listVisits()).data).is<Visit[]>();
  const visit = await client.getVisit('vi_1', { fields: ['startedAt', 'pages.path'] });
  expectType(visit).hasKeys<'id' | 'startedAt' | 'pages'>();
  expectType(visit.pages[0]!).hasKeys<'path'>();
  expectType((await client.getVisit('vi_1', { fields: ['pages'] })).pages).is<PageView[]>();
  expectType(
    (await client.listCompanyVisits('co_1', { fields: ['landingPage'] })).data[0]!,
  ).hasKeys<'id' | 'landingPage'>();
  for await (const each of client.visits({ page: ['/pricing'], fields: ['companyId'] })) {
    expectType(each).hasKeys<'id' | 'companyId'>();
  }
  for await (const changes of client.visitChangeStream({ fields: ['pageViewCount'] })) {
    for (const change of changes.data) {
      if (change.op === 'upsert') expectType(change.visit).hasKeys<'id' | 'pageViewCount'>();
    }
  }

  // A name that is no field does not compile.
  // @ts-expect-error: `colour` is no company field.
  await client.listCompanies({ fields: ['colour'] });
  // @ts-expect-error: a lead has no contacts.
  await client.getLead('ld_1', { fields: ['contacts'] });
  // @ts-expect-error: a visit has no contacts.
  await client.listVisits({ fields: ['contacts.email'] });
}

import { count, dateTime, ID_MAX_LENGTH, nullableText, oneOf, score, text } from '../items/fields';
import { selectable } from '../items/field-selection';
import { anyDomain, anyOf, atLeast, contains, equals, visitedPage } from '../items/filters';
import { CrmStatus, IntentLevel, Seniority } from '../generated/prisma/enums';

/*
 * Maximum lengths, in characters (code points), sized for real data with room to spare; they bound
 * what the import accepts, what the database stores (CHECK constraints, migration
 * 20261125000000_field_bounds) and what a response can weigh (docs/api.md, "Sizes").
 *
 * - Ids: 100 (ID_MAX_LENGTH, items/fields.ts). Ours are a prefix and a few digits (`co_000001`); 100 holds a UUID (36) or a
 *   prefixed ULID with room, and keeps the feeds' cursors, which carry an id, short.
 * - Names (company, person) and job titles: 200. The UK's register caps company names at 160
 *   characters (legal form included); a person's full name or a title longer than 200 is a
 *   concatenation, not a name.
 * - Labels (industry, country, city): 100. The longest official country name is 56 characters,
 *   the longest city names in common use under 60.
 * - Bands (size `51-200`, revenue `10M-50M`): 50.
 * - Registry numbers: 50. A SIREN is 9 digits; other registries' numbers run to about 21
 *   characters (India's CIN), or a little more with a court's name.
 * - Domain: 253, the longest DNS name (RFC 1035). E-mail: 254, the longest address a path of
 *   RFC 5321 can carry.
 * - Phone: 50. E.164 numbers have at most 15 digits; the rest is room for spaces, a `+` and an
 *   extension.
 * - LinkedIn: 300. A profile's address is `https://www.linkedin.com/in/` (28 characters) and a
 *   public name of at most 100 (LinkedIn's limit), and a generated name of non-Latin letters is
 *   percent-encoded; 300 holds that, a trailing slash and a short query. Not a general URL bound
 *   (2,048): the field holds LinkedIn profiles only, and each contact's bound weighs on a page of
 *   up to 200 companies (docs/api.md, "Sizes").
 */
const NAME_MAX_LENGTH = 200;
const LABEL_MAX_LENGTH = 100;
const BAND_MAX_LENGTH = 50;

/**
 * Contacts per company, at most: the import refuses more and so does the database (a trigger of
 * migration 20261125000000_field_bounds). A company's contacts are the few people of its buying
 * group that were identified (the demo has 1 to 4). Each one allowed adds up to 6.7 KB to a
 * company's JSON and 1.3 MB to a page of 200 companies (docs/api.md, "Sizes"), which the server
 * must be able to hold, several at once, in its 128 MiB of heap: 10.
 */
export const MAX_CONTACTS_PER_COMPANY = 10;

/**
 * A company's fields, in the contract's order: the one place that names their columns and kinds
 * (see items/fields.ts for what derives from it). `contacts` is the company's list of
 * CONTACT_FIELDS objects, assembled by the SQL in companies.sql.ts.
 */
export const COMPANY_FIELDS = {
  id: text('id', ID_MAX_LENGTH, { example: 'co_000001' }),
  name: text('name', NAME_MAX_LENGTH, { example: 'Acme Analytics' }),
  domain: text('domain', 253, {
    description: 'Internet domain of the company.',
    example: 'acme.example',
  }),
  industry: text('industry', LABEL_MAX_LENGTH, { example: 'Software' }),
  size: text('size', BAND_MAX_LENGTH, {
    description: 'Headcount band as given by the identification source (a range as text).',
    example: '51-200',
  }),
  country: text('country', LABEL_MAX_LENGTH, { example: 'France' }),
  city: text('city', LABEL_MAX_LENGTH, { example: 'Lyon' }),
  revenue: text('revenue', BAND_MAX_LENGTH, {
    description: 'Estimated revenue band, as text.',
    example: '10M-50M',
  }),
  siren: nullableText('siren', 50, {
    description:
      'Company registry number when the company could be matched to the registry; otherwise ' +
      'null (always present, never omitted).',
    example: '552100554',
  }),
  intentScore: score('intent_score', {
    description:
      'Intent, 0 to 100 inclusive: derived from recent visits with a 14-day decay. It depends on ' +
      "the workspace's scoring profile, so two workspaces may score the same company differently. " +
      'The list is sorted by it, highest first.',
    example: 87.5,
  }),
  intentLevel: oneOf('intent_level', IntentLevel, 'IntentLevel', {
    description: 'Intent level; leads use the same enumeration.',
  }),
  icpScore: score('icp_score', {
    description: 'Firmographic fit to the ideal customer profile, 0 to 100 inclusive.',
    example: 72,
  }),
  commercialScore: score('commercial_score', {
    description: 'Commercial synthesis of intent and fit, 0 to 100 inclusive.',
    example: 80,
  }),
  crmStatus: oneOf('crm_status', CrmStatus, 'CrmStatus', {
    description: 'CRM status of the company; the API never changes it.',
  }),
  visitsCount: count('visits_count', { description: 'Number of visits.', example: 12 }),
  firstSeen: dateTime('first_seen', {
    description: 'First visit.',
    example: '2026-03-01T09:30:00.000Z',
  }),
  lastSeen: dateTime('last_seen', {
    description: 'Last visit. The `since` parameter of the companies list filters on it.',
    example: '2026-03-01T09:30:00.000Z',
  }),
};

/** `visitedSince`, when `visitedPage` is given alone: this many days before the request. */
export const VISITED_SINCE_DEFAULT_DAYS = 30;

/**
 * The filters of the companies list (items/filters.ts), each on one of the fields above, and the
 * companies by the pages they viewed (their visits' page views).
 */
export const COMPANY_FILTERS = {
  intentLevel: anyOf(COMPANY_FIELDS, 'intentLevel'),
  crmStatus: anyOf(COMPANY_FIELDS, 'crmStatus'),
  minIntentScore: atLeast(COMPANY_FIELDS, 'intentScore'),
  country: equals(COMPANY_FIELDS, 'country'),
  domain: anyDomain(COMPANY_FIELDS, 'domain'),
  q: contains(COMPANY_FIELDS, ['name', 'domain']),
  visitedPage: visitedPage('companies.id', 'visitedSince', VISITED_SINCE_DEFAULT_DAYS),
};

export const CONTACT_FIELDS = {
  id: text('id', ID_MAX_LENGTH, { example: 'ct_000001' }),
  name: text('name', NAME_MAX_LENGTH, { example: 'Jeanne Martin' }),
  jobTitle: text('job_title', NAME_MAX_LENGTH, { example: 'Head of Growth' }),
  email: nullableText('email', 254, {
    description: 'Set only if the address was found or supplied; otherwise null.',
    example: 'jeanne.martin@example.com',
  }),
  phone: nullableText('phone', 50, {
    description: 'Direct line; null until a search has succeeded.',
    example: null,
  }),
  linkedin: nullableText('linkedin', 300, {
    description: 'Profile address, or null.',
    example: null,
  }),
  seniority: oneOf('seniority', Seniority, 'Seniority', {
    description:
      'Seniority of a contact; contacts are listed in this order, then by name, then id.',
  }),
};

/**
 * What a read's `fields` may name (items/field-selection.ts): a company's fields, and its contacts,
 * whole (`contacts`) or by field (`contacts.email`).
 */
export const COMPANY_SELECTABLE = selectable(COMPANY_FIELDS, { contacts: CONTACT_FIELDS });

import {
  count,
  dateTime,
  type FieldMap,
  ID_MAX_LENGTH,
  nullableText,
  oneOf,
  score,
  text,
} from '../items/fields';
import { CrmStatus, IntentLevel, Seniority } from '../generated/prisma/enums';
import type { CompanyDto, ContactDto } from './dto/company.dto';

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
  id: text('id', ID_MAX_LENGTH),
  name: text('name', NAME_MAX_LENGTH),
  domain: text('domain', 253),
  industry: text('industry', LABEL_MAX_LENGTH),
  size: text('size', BAND_MAX_LENGTH),
  country: text('country', LABEL_MAX_LENGTH),
  city: text('city', LABEL_MAX_LENGTH),
  revenue: text('revenue', BAND_MAX_LENGTH),
  siren: nullableText('siren', 50),
  intentScore: score('intent_score'),
  intentLevel: oneOf('intent_level', IntentLevel, 'IntentLevel'),
  icpScore: score('icp_score'),
  commercialScore: score('commercial_score'),
  crmStatus: oneOf('crm_status', CrmStatus, 'CrmStatus'),
  visitsCount: count('visits_count'),
  firstSeen: dateTime('first_seen'),
  lastSeen: dateTime('last_seen'),
} satisfies FieldMap<Omit<CompanyDto, 'contacts'>>;

export const CONTACT_FIELDS = {
  id: text('id', ID_MAX_LENGTH),
  name: text('name', NAME_MAX_LENGTH),
  jobTitle: text('job_title', NAME_MAX_LENGTH),
  email: nullableText('email', 254),
  phone: nullableText('phone', 50),
  linkedin: nullableText('linkedin', 300),
  seniority: oneOf('seniority', Seniority, 'Seniority'),
} satisfies FieldMap<ContactDto>;

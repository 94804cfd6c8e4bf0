import { count, dateTime, type FieldMap, nullableText, oneOf, score, text } from '../items/fields';
import { CrmStatus, IntentLevel, Seniority } from '../generated/prisma/enums';
import type { CompanyDto, ContactDto } from './dto/company.dto';

/**
 * A company's fields, in the contract's order: the one place that names their columns and kinds
 * (see items/fields.ts for what derives from it). `contacts` is the company's list of
 * CONTACT_FIELDS objects, assembled by the SQL in companies.sql.ts.
 */
export const COMPANY_FIELDS = {
  id: text('id'),
  name: text('name'),
  domain: text('domain'),
  industry: text('industry'),
  size: text('size'),
  country: text('country'),
  city: text('city'),
  revenue: text('revenue'),
  siren: nullableText('siren'),
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
  id: text('id'),
  name: text('name'),
  jobTitle: text('job_title'),
  email: nullableText('email'),
  phone: nullableText('phone'),
  linkedin: nullableText('linkedin'),
  seniority: oneOf('seniority', Seniority, 'Seniority'),
} satisfies FieldMap<ContactDto>;

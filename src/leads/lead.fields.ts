import {
  dateTime,
  type FieldMap,
  ID_MAX_LENGTH,
  joinedText,
  nullableText,
  oneOf,
  score,
  text,
} from '../items/fields';
import { COMPANY_FIELDS, CONTACT_FIELDS } from '../companies/company.fields';
import { IntentLevel, LeadStatus } from '../generated/prisma/enums';
import type { LeadDto } from './dto/lead.dto';

// Free text (the signal observed, the action recommended): a sentence or a short paragraph for a
// salesperson to read in a list; 1,000 characters is about 150 words.
const FREE_TEXT_MAX_LENGTH = 1_000;

/**
 * A lead's fields, in the contract's order: the one place that names their columns and kinds
 * (see items/fields.ts; ids, the contact's name, title and e-mail are bounded as in
 * company.fields.ts). `companyName` is read from the lead's company (joined as `company`), never
 * stored with the lead, and bounded there.
 */
export const LEAD_FIELDS = {
  id: text('id', ID_MAX_LENGTH),
  companyId: text('company_id', ID_MAX_LENGTH),
  companyName: joinedText('company.name', COMPANY_FIELDS.name.maxLength),
  contactName: text('contact_name', CONTACT_FIELDS.name.maxLength),
  contactTitle: text('contact_title', CONTACT_FIELDS.jobTitle.maxLength),
  intentScore: score('intent_score'),
  intentLevel: oneOf('intent_level', IntentLevel, 'IntentLevel'),
  signal: text('signal', FREE_TEXT_MAX_LENGTH),
  recommendedAction: text('recommended_action', FREE_TEXT_MAX_LENGTH),
  status: oneOf('status', LeadStatus, 'LeadStatus'),
  createdAt: dateTime('created_at'),
  contactEmail: nullableText('contact_email', CONTACT_FIELDS.email.maxLength),
  assignedToId: nullableText('assigned_to_id', ID_MAX_LENGTH),
} satisfies FieldMap<LeadDto>;

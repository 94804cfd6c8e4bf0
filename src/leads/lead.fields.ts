import {
  dateTime,
  type FieldMap,
  joinedText,
  nullableText,
  oneOf,
  score,
  text,
} from '../items/fields';
import { IntentLevel, LeadStatus } from '../generated/prisma/enums';
import type { LeadDto } from './dto/lead.dto';

/**
 * A lead's fields, in the contract's order: the one place that names their columns and kinds
 * (see items/fields.ts). `companyName` is read from the lead's company (joined as `company`),
 * never stored with the lead.
 */
export const LEAD_FIELDS = {
  id: text('id'),
  companyId: text('company_id'),
  companyName: joinedText('company.name'),
  contactName: text('contact_name'),
  contactTitle: text('contact_title'),
  intentScore: score('intent_score'),
  intentLevel: oneOf('intent_level', IntentLevel, 'IntentLevel'),
  signal: text('signal'),
  recommendedAction: text('recommended_action'),
  status: oneOf('status', LeadStatus, 'LeadStatus'),
  createdAt: dateTime('created_at'),
  contactEmail: nullableText('contact_email'),
  assignedToId: nullableText('assigned_to_id'),
} satisfies FieldMap<LeadDto>;

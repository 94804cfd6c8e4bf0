import { selectable } from '../items/field-selection';
import { anyOf, atLeast, equals } from '../items/filters';
import {
  dateTime,
  ID_MAX_LENGTH,
  joinedText,
  nullableText,
  oneOf,
  score,
  text,
} from '../items/fields';
import { COMPANY_FIELDS, CONTACT_FIELDS } from '../companies/company.fields';
import { IntentLevel, LeadStatus } from '../generated/prisma/enums';

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
  id: text('id', ID_MAX_LENGTH, { description: 'Lead identifier.', example: 'ld_000001' }),
  companyId: text('company_id', ID_MAX_LENGTH, {
    description: 'Identifier of the company.',
    example: 'co_000001',
  }),
  companyName: joinedText('company.name', COMPANY_FIELDS.name.maxLength, {
    description: "The company's current name.",
    example: 'Acme Analytics',
  }),
  contactName: text('contact_name', CONTACT_FIELDS.name.maxLength, { example: 'Jeanne Martin' }),
  contactTitle: text('contact_title', CONTACT_FIELDS.jobTitle.maxLength, { example: 'VP Sales' }),
  intentScore: score('intent_score', {
    description: 'Intent score of the lead, 0 to 100 inclusive; the list is sorted by it.',
    example: 91,
  }),
  intentLevel: oneOf('intent_level', IntentLevel, 'IntentLevel', {
    description: 'Intent level; the same enumeration as the company field.',
  }),
  signal: text('signal', FREE_TEXT_MAX_LENGTH, {
    description: 'Free text: the observed behaviour that produced the lead.',
    example: 'Visited the pricing page 4 times this week',
  }),
  recommendedAction: text('recommended_action', FREE_TEXT_MAX_LENGTH, {
    description: 'Free text: the recommended next step.',
    example: 'Call within 24 hours',
  }),
  status: oneOf('status', LeadStatus, 'LeadStatus', {
    description: 'Status of a lead; the API never changes it.',
  }),
  createdAt: dateTime('created_at', {
    description:
      'Creation of the lead, ISO 8601 in UTC with milliseconds. The `since` parameter of the ' +
      'leads list filters on it.',
    example: '2026-03-01T09:30:00.000Z',
  }),
  contactEmail: nullableText('contact_email', CONTACT_FIELDS.email.maxLength, {
    description: 'Contact e-mail address, or null when unknown (always present).',
    example: null,
  }),
  assignedToId: nullableText('assigned_to_id', ID_MAX_LENGTH, {
    description: 'Identifier of the user the lead is assigned to, or null (always present).',
    example: null,
  }),
};

/** The filters of the leads list (items/filters.ts), each on one of the fields above. */
export const LEAD_FILTERS = {
  intentLevel: anyOf(LEAD_FIELDS, 'intentLevel'),
  status: anyOf(LEAD_FIELDS, 'status'),
  minIntentScore: atLeast(LEAD_FIELDS, 'intentScore'),
  assignedToId: equals(LEAD_FIELDS, 'assignedToId'),
};

/** What a read's `fields` may name (items/field-selection.ts): a lead's fields. */
export const LEAD_SELECTABLE = selectable(LEAD_FIELDS);

import { ApiProperty } from '@nestjs/swagger';
import { CrmStatus, IntentLevel, Seniority } from '../../generated/prisma/enums';
import { COMPANY_FIELDS, CONTACT_FIELDS, MAX_CONTACTS_PER_COMPANY } from '../company.fields';

// Scores are numbers in 0..100 inclusive (docs/api.md, Data conventions).
const SCORE = { type: 'number', minimum: 0, maximum: 100 } as const;
// Every date-time of a response: ISO 8601 in UTC with milliseconds and `Z`.
const DATE_TIME = { type: String, format: 'date-time', example: '2026-03-01T09:30:00.000Z' };
// Every text field's maxLength is its field map's (company.fields.ts), stated there once.

export class ContactDto {
  @ApiProperty({ maxLength: CONTACT_FIELDS.id.maxLength, example: 'ct_000001' })
  id!: string;

  @ApiProperty({ maxLength: CONTACT_FIELDS.name.maxLength, example: 'Jeanne Martin' })
  name!: string;

  @ApiProperty({ maxLength: CONTACT_FIELDS.jobTitle.maxLength, example: 'Head of Growth' })
  jobTitle!: string;

  // Nullable fields are always present, null when unknown: never omitted.
  @ApiProperty({
    maxLength: CONTACT_FIELDS.email.maxLength,
    type: String,
    nullable: true,
    description: 'Set only if the address was found or supplied; otherwise null.',
    example: 'jeanne.martin@example.com',
  })
  email!: string | null;

  @ApiProperty({
    maxLength: CONTACT_FIELDS.phone.maxLength,
    type: String,
    nullable: true,
    description: 'Direct line; null until a search has succeeded.',
    example: null,
  })
  phone!: string | null;

  @ApiProperty({
    maxLength: CONTACT_FIELDS.linkedin.maxLength,
    type: String,
    nullable: true,
    description: 'Profile address, or null.',
    example: null,
  })
  linkedin!: string | null;

  // Enum values come from the Prisma schema, so that the document cannot drift from it. The text
  // goes in `description` (it also describes the shared component): @nestjs/swagger 11.4 drops
  // `enumSchema.description` when it creates the component.
  @ApiProperty({
    enum: Seniority,
    enumName: 'Seniority',
    description:
      'Seniority of a contact; contacts are listed in this order, then by name, then id.',
  })
  seniority!: Seniority;
}

export class CompanyDto {
  @ApiProperty({ maxLength: COMPANY_FIELDS.id.maxLength, example: 'co_000001' })
  id!: string;

  @ApiProperty({ maxLength: COMPANY_FIELDS.name.maxLength, example: 'Acme Analytics' })
  name!: string;

  @ApiProperty({
    maxLength: COMPANY_FIELDS.domain.maxLength,
    description: 'Internet domain of the company.',
    example: 'acme.example',
  })
  domain!: string;

  @ApiProperty({ maxLength: COMPANY_FIELDS.industry.maxLength, example: 'Software' })
  industry!: string;

  @ApiProperty({
    maxLength: COMPANY_FIELDS.size.maxLength,
    description: 'Headcount band as given by the identification source (a range as text).',
    example: '51-200',
  })
  size!: string;

  @ApiProperty({ maxLength: COMPANY_FIELDS.country.maxLength, example: 'France' })
  country!: string;

  @ApiProperty({ maxLength: COMPANY_FIELDS.city.maxLength, example: 'Lyon' })
  city!: string;

  @ApiProperty({
    maxLength: COMPANY_FIELDS.revenue.maxLength,
    description: 'Estimated revenue band, as text.',
    example: '10M-50M',
  })
  revenue!: string;

  @ApiProperty({
    maxLength: COMPANY_FIELDS.siren.maxLength,
    type: String,
    nullable: true,
    description:
      'Company registry number when the company could be matched to the registry; otherwise ' +
      'null (always present, never omitted).',
    example: '552100554',
  })
  siren!: string | null;

  @ApiProperty({
    ...SCORE,
    description:
      'Intent, 0 to 100 inclusive: derived from recent visits with a 14-day decay. It depends on ' +
      "the workspace's scoring profile, so two workspaces may score the same company differently. " +
      'The list is sorted by it, highest first.',
    example: 87.5,
  })
  intentScore!: number;

  @ApiProperty({
    enum: IntentLevel,
    enumName: 'IntentLevel',
    description: 'Intent level; leads use the same enumeration.',
  })
  intentLevel!: IntentLevel;

  @ApiProperty({
    ...SCORE,
    description: 'Firmographic fit to the ideal customer profile, 0 to 100 inclusive.',
    example: 72,
  })
  icpScore!: number;

  @ApiProperty({
    ...SCORE,
    description: 'Commercial synthesis of intent and fit, 0 to 100 inclusive.',
    example: 80,
  })
  commercialScore!: number;

  @ApiProperty({
    enum: CrmStatus,
    enumName: 'CrmStatus',
    description: 'CRM status of the company; the API never changes it.',
  })
  crmStatus!: CrmStatus;

  @ApiProperty({ type: 'integer', minimum: 0, description: 'Number of visits.', example: 12 })
  visitsCount!: number;

  @ApiProperty({ ...DATE_TIME, description: 'First visit.' })
  firstSeen!: string;

  @ApiProperty({
    ...DATE_TIME,
    description: 'Last visit. The `since` parameter of the companies list filters on it.',
  })
  lastSeen!: string;

  @ApiProperty({
    type: [ContactDto],
    maxItems: MAX_CONTACTS_PER_COMPANY,
    description:
      'Contacts of the company, always an array (possibly empty, at most ' +
      `${MAX_CONTACTS_PER_COMPANY}), ordered by seniority ` +
      '(c_level, vp, director, manager, ic), then name, then id.',
  })
  contacts!: ContactDto[];
}

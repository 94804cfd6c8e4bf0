import { ApiProperty } from '@nestjs/swagger';
import { IntentLevel, LeadStatus } from '../../generated/prisma/enums';
import { LEAD_FIELDS } from '../lead.fields';

// Every field is always present in every lead (docs/api.md, Lead); only contactEmail and assignedToId
// may be null. Every text field's maxLength is its field map's (lead.fields.ts), stated there once.
export class LeadDto {
  @ApiProperty({
    maxLength: LEAD_FIELDS.id.maxLength,
    description: 'Lead identifier.',
    example: 'ld_000001',
  })
  id!: string;

  @ApiProperty({
    maxLength: LEAD_FIELDS.companyId.maxLength,
    description: 'Identifier of the company.',
    example: 'co_000001',
  })
  companyId!: string;

  @ApiProperty({
    maxLength: LEAD_FIELDS.companyName.maxLength,
    description: "The company's current name.",
    example: 'Acme Analytics',
  })
  companyName!: string;

  @ApiProperty({ maxLength: LEAD_FIELDS.contactName.maxLength, example: 'Jeanne Martin' })
  contactName!: string;

  @ApiProperty({ maxLength: LEAD_FIELDS.contactTitle.maxLength, example: 'VP Sales' })
  contactTitle!: string;

  @ApiProperty({
    type: 'number',
    minimum: 0,
    maximum: 100,
    description: 'Intent score of the lead, 0 to 100 inclusive; the list is sorted by it.',
    example: 91,
  })
  intentScore!: number;

  // The company enumeration, by reference: one IntentLevel in the document, not two.
  @ApiProperty({
    enum: IntentLevel,
    enumName: 'IntentLevel',
    description: 'Intent level; the same enumeration as the company field.',
  })
  intentLevel!: IntentLevel;

  @ApiProperty({
    maxLength: LEAD_FIELDS.signal.maxLength,
    description: 'Free text: the observed behaviour that produced the lead.',
    example: 'Visited the pricing page 4 times this week',
  })
  signal!: string;

  @ApiProperty({
    maxLength: LEAD_FIELDS.recommendedAction.maxLength,
    description: 'Free text: the recommended next step.',
    example: 'Call within 24 hours',
  })
  recommendedAction!: string;

  @ApiProperty({
    enum: LeadStatus,
    enumName: 'LeadStatus',
    description: 'Status of a lead; the API never changes it.',
  })
  status!: LeadStatus;

  @ApiProperty({
    type: String,
    format: 'date-time',
    description:
      'Creation of the lead, ISO 8601 in UTC with milliseconds. The `since` parameter of the ' +
      'leads list filters on it.',
    example: '2026-03-01T09:30:00.000Z',
  })
  createdAt!: string;

  @ApiProperty({
    maxLength: LEAD_FIELDS.contactEmail.maxLength,
    type: String,
    nullable: true,
    description: 'Contact e-mail address, or null when unknown (always present).',
    example: null,
  })
  contactEmail!: string | null;

  @ApiProperty({
    maxLength: LEAD_FIELDS.assignedToId.maxLength,
    type: String,
    nullable: true,
    description: 'Identifier of the user the lead is assigned to, or null (always present).',
    example: null,
  })
  assignedToId!: string | null;
}

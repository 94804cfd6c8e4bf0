import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { FieldDto, SelectedFieldDto } from '../../items/field-dto';
import { COMPANY_FIELDS, CONTACT_FIELDS, MAX_CONTACTS_PER_COMPANY } from '../company.fields';

// Every field, its type, bounds and documentation: the field maps' (company.fields.ts).
export class ContactDto extends FieldDto(CONTACT_FIELDS) {}

const CONTACTS_ORDER =
  'ordered by seniority (c_level, vp, director, manager, ic), then name, then id';

export class CompanyDto extends FieldDto(COMPANY_FIELDS) {
  @ApiProperty({
    type: [ContactDto],
    maxItems: MAX_CONTACTS_PER_COMPANY,
    description:
      'Contacts of the company, always an array (possibly empty, at most ' +
      `${MAX_CONTACTS_PER_COMPANY}), ${CONTACTS_ORDER}.`,
  })
  contacts!: ContactDto[];
}

/** A contact with the fields that `fields` named as `contacts.<field>`, and its id. */
export class SelectedContactDto extends SelectedFieldDto(CONTACT_FIELDS) {}

/** A company read with `fields`: the fields named, and its id. */
export class SelectedCompanyDto extends SelectedFieldDto(COMPANY_FIELDS) {
  @ApiPropertyOptional({
    type: [SelectedContactDto],
    maxItems: MAX_CONTACTS_PER_COMPANY,
    description:
      'Present when `fields` names `contacts` (each contact whole) or a `contacts.<field>` (each ' +
      `contact with those fields and its id); the same contacts, ${CONTACTS_ORDER}.`,
  })
  contacts?: SelectedContactDto[];
}

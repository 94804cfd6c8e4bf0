import { ApiProperty } from '@nestjs/swagger';
import { FieldDto } from '../../items/field-dto';
import { COMPANY_FIELDS, CONTACT_FIELDS, MAX_CONTACTS_PER_COMPANY } from '../company.fields';

// Every field, its type, bounds and documentation: the field maps' (company.fields.ts).
export class ContactDto extends FieldDto(CONTACT_FIELDS) {}

export class CompanyDto extends FieldDto(COMPANY_FIELDS) {
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

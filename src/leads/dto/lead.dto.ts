import { FieldDto, SelectedFieldDto } from '../../items/field-dto';
import { LEAD_FIELDS } from '../lead.fields';

// Every field, its type, bounds and documentation: the field map's (lead.fields.ts). Every field
// is always present in every lead (docs/api.md, Lead); only contactEmail and assignedToId may be null.
export class LeadDto extends FieldDto(LEAD_FIELDS) {}

/** A lead read with `fields`: the fields named, and its id. */
export class SelectedLeadDto extends SelectedFieldDto(LEAD_FIELDS) {}

import { WithFields } from '../../items/fields-query';
import { FilteredListQuery } from '../../items/filters';
import { LEAD_FILTERS, LEAD_SELECTABLE } from '../lead.fields';

/** `limit`, `offset`, `since`, the leads list's filters and `fields`. */
export class LeadListQueryDto extends WithFields(
  FilteredListQuery(LEAD_FILTERS),
  LEAD_SELECTABLE,
) {}

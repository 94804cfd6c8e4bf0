import { WithFields } from '../../items/fields-query';
import { FilteredListQuery } from '../../items/filters';
import { COMPANY_FILTERS, COMPANY_SELECTABLE } from '../company.fields';

/** `limit`, `offset`, `since`, the companies list's filters and `fields`. */
export class CompanyListQueryDto extends WithFields(
  FilteredListQuery(COMPANY_FILTERS),
  COMPANY_SELECTABLE,
) {}

import { FilteredListQuery } from '../../items/filters';
import { COMPANY_FILTERS } from '../company.fields';

/** `limit`, `offset`, `since` and the companies list's filters. */
export class CompanyListQueryDto extends FilteredListQuery(COMPANY_FILTERS) {}

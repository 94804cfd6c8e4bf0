import { FilteredListQuery } from '../../items/filters';
import { LEAD_FILTERS } from '../lead.fields';

/** `limit`, `offset`, `since` and the leads list's filters. */
export class LeadListQueryDto extends FilteredListQuery(LEAD_FILTERS) {}

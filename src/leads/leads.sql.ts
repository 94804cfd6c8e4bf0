import { changeBoundariesSql, changeFeedSql } from '../changes/change-feed-sql';
import { itemSql, type ItemSelect } from '../items/item-sql';
import { selectList } from '../items/fields';
import { ListStatements } from '../items/list-page';
import { LEAD_FIELDS, LEAD_FILTERS } from './lead.fields';

/** One lead as the API shows it, with its company's current name. */
export const LEAD_ITEM: ItemSelect = {
  table: 'leads',
  item: selectList(LEAD_FIELDS, 'row'),
  joins:
    'JOIN companies company ON company.id = row.company_id AND company.workspace_id = row.workspace_id',
};

/** A page of leads, each with its company's current name, and its total, as JSON text. */
export const LEAD_LIST = new ListStatements(
  {
    ...LEAD_ITEM,
    sinceColumn: 'created_at',
    countTable: 'lead_day_counts',
    countColumn: 'leads',
    filterCountTable: 'lead_filter_counts',
    filterDeltaTable: 'lead_filter_count_deltas',
  },
  LEAD_FILTERS,
);

/** The leads list without filters. */
export const LEAD_PAGE_SQL = LEAD_LIST.unfiltered;

/** One lead of the workspace, or no row. */
export const LEAD_SQL = itemSql(LEAD_ITEM);

const LEAD_FEED = {
  ...LEAD_ITEM,
  feed: 'leads',
  changeTable: 'lead_changes',
  key: 'lead',
} as const;

/** A page of the leads' change feed (change-feed-sql.ts). */
export const LEAD_CHANGES_SQL = changeFeedSql(LEAD_FEED);

/** The statements of the leads' change stream (change-streams.ts): pages and ranges as lines. */
export const LEAD_CHANGE_STREAM_SQL = {
  lines: changeFeedSql(LEAD_FEED, 'lines'),
  range: changeFeedSql(LEAD_FEED, 'lines', true),
  boundaries: changeBoundariesSql('lead_changes'),
};

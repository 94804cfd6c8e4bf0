import { changeBoundariesSql, changeFeedSql } from '../changes/change-feed-sql';
import { itemSql, type ItemSelect } from '../items/item-sql';
import { selectList } from '../items/fields';
import { ListStatements } from '../items/list-page';
import { COMPANY_FIELDS, COMPANY_FILTERS, CONTACT_FIELDS } from './company.fields';

/** One company as the API shows it, contacts included: lists, feed and single reads alike. */
export const COMPANY_ITEM: ItemSelect = {
  table: 'companies',
  item: `${selectList(COMPANY_FIELDS, 'row')},
    coalesce(
      (SELECT array_to_json(array_agg(contact ORDER BY contact.seniority, contact.name, contact.id))
        FROM (SELECT ${selectList(CONTACT_FIELDS, 'contact_row')}
          FROM contacts contact_row
          WHERE contact_row.company_id = row.id AND contact_row.workspace_id = row.workspace_id
        ) contact),
      '[]'
    ) AS contacts`,
};

/** A page of companies with their contacts, and its total, as the response's JSON text. */
export const COMPANY_LIST = new ListStatements(
  {
    ...COMPANY_ITEM,
    sinceColumn: 'last_seen',
    countTable: 'company_day_counts',
    countColumn: 'companies',
    filterCountTable: 'company_filter_counts',
    filterDeltaTable: 'company_filter_count_deltas',
  },
  COMPANY_FILTERS,
);

/** The companies list without filters. */
export const COMPANY_PAGE_SQL = COMPANY_LIST.unfiltered;

/** One company of the workspace, or no row. */
export const COMPANY_SQL = itemSql(COMPANY_ITEM);

const COMPANY_FEED = {
  ...COMPANY_ITEM,
  feed: 'companies',
  changeTable: 'company_changes',
  key: 'company',
} as const;

/** A page of the companies' change feed (change-feed-sql.ts). */
export const COMPANY_CHANGES_SQL = changeFeedSql(COMPANY_FEED);

/** The statements of the companies' change stream (change-streams.ts): pages and ranges as lines. */
export const COMPANY_CHANGE_STREAM_SQL = {
  lines: changeFeedSql(COMPANY_FEED, 'lines'),
  range: changeFeedSql(COMPANY_FEED, 'lines', true),
  boundaries: changeBoundariesSql('company_changes'),
};

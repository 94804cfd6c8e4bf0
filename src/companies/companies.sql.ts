import { changeFeedSql } from '../changes/change-feed-sql';
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

/** A page of the companies' change feed (change-feed-sql.ts). */
export const COMPANY_CHANGES_SQL = changeFeedSql({
  ...COMPANY_ITEM,
  feed: 'companies',
  changeTable: 'company_changes',
  key: 'company',
});

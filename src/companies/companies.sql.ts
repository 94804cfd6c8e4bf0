import { selectedStatements, type SelectedStatements } from '../changes/resource-reads';
import { BySelection, pickFields, type Selection } from '../items/field-selection';
import type { ItemSelect } from '../items/item-sql';
import { selectList } from '../items/fields';
import { ListStatements } from '../items/list-page';
import { COMPANY_FIELDS, COMPANY_FILTERS, CONTACT_FIELDS } from './company.fields';

const CONTACTS_OF_ROW =
  'contact_row.company_id = row.id AND contact_row.workspace_id = row.workspace_id';

/**
 * One company as the API shows it, contacts included: lists, feed and single reads alike. With a
 * selection (`fields`), only its fields are written: the contacts only when selected, each with
 * only its selected fields (kept in the same order, by columns that need not be among them).
 */
export function companyItem(selection?: Selection): ItemSelect {
  const fields = selection ? pickFields(COMPANY_FIELDS, selection.fields) : COMPANY_FIELDS;
  const contacts = selection ? selection.lists.contacts : Object.keys(CONTACT_FIELDS);
  const items = [selectList(fields, 'row')];
  if (contacts === undefined) {
    // No contacts.
  } else if (contacts.length === Object.keys(CONTACT_FIELDS).length) {
    items.push(`coalesce(
      (SELECT array_to_json(array_agg(contact ORDER BY contact.seniority, contact.name, contact.id))
        FROM (SELECT ${selectList(CONTACT_FIELDS, 'contact_row')}
          FROM contacts contact_row
          WHERE ${CONTACTS_OF_ROW}
        ) contact),
      '[]'
    ) AS contacts`);
  } else {
    items.push(`coalesce(
      (SELECT array_to_json(array_agg(
          (SELECT row_to_json(contact) FROM (SELECT ${selectList(pickFields(CONTACT_FIELDS, contacts), 'contact_row')}) contact)
          ORDER BY contact_row.seniority, contact_row.name, contact_row.id))
        FROM contacts contact_row
        WHERE ${CONTACTS_OF_ROW}),
      '[]'
    ) AS contacts`);
  }
  return { table: 'companies', item: items.join(',\n    ') };
}

/** One company, every field: what webhook events carry. */
export const COMPANY_ITEM = companyItem();

/** A page of companies with their contacts, and its total, as the response's JSON text. */
export const COMPANY_LIST = new ListStatements(
  {
    table: 'companies',
    sinceColumn: 'last_seen',
    countTable: 'company_day_counts',
    countColumn: 'companies',
    filterCountTable: 'company_filter_counts',
    filterDeltaTable: 'company_filter_count_deltas',
  },
  COMPANY_FILTERS,
  companyItem,
);

/** The companies list without filters. */
export const COMPANY_PAGE_SQL = COMPANY_LIST.unfiltered;

/**
 * A company's other statements, for a selection: one company of the workspace, or no row
 * (item-sql.ts); a page of the companies' change feed (change-feed-sql.ts); and the change
 * stream's (change-streams.ts): pages and ranges as lines, and where pages end.
 */
export const COMPANY_STATEMENTS = new BySelection<SelectedStatements>('companies', (selection) =>
  selectedStatements({
    ...companyItem(selection),
    feed: 'companies',
    changeTable: 'company_changes',
    key: 'company',
  }),
);

/** One company of the workspace, or no row. */
export const COMPANY_SQL = COMPANY_STATEMENTS.whole.item;

/** A page of the companies' change feed (change-feed-sql.ts). */
export const COMPANY_CHANGES_SQL = COMPANY_STATEMENTS.whole.changes;

/** The statements of the companies' change stream (change-streams.ts): pages and ranges as lines. */
export const COMPANY_CHANGE_STREAM_SQL = COMPANY_STATEMENTS.whole.stream;

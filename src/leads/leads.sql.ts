import { selectedStatements, type SelectedStatements } from '../changes/resource-reads';
import { BySelection, pickFields, type Selection } from '../items/field-selection';
import type { ItemSelect } from '../items/item-sql';
import { selectList } from '../items/fields';
import { ListStatements } from '../items/list-page';
import { LEAD_FIELDS, LEAD_FILTERS } from './lead.fields';

/**
 * One lead as the API shows it, with its company's current name; with a selection (`fields`),
 * only its fields. The company is joined whatever the selection, so that the same leads are read.
 */
export function leadItem(selection?: Selection): ItemSelect {
  return {
    table: 'leads',
    item: selectList(selection ? pickFields(LEAD_FIELDS, selection.fields) : LEAD_FIELDS, 'row'),
    joins:
      'JOIN companies company ON company.id = row.company_id AND company.workspace_id = row.workspace_id',
  };
}

/** One lead, every field: what webhook events carry. */
export const LEAD_ITEM = leadItem();

/** A page of leads, each with its company's current name, and its total, as JSON text. */
export const LEAD_LIST = new ListStatements(
  {
    table: 'leads',
    sinceColumn: 'created_at',
    countTable: 'lead_day_counts',
    countColumn: 'leads',
    filterCountTable: 'lead_filter_counts',
    filterDeltaTable: 'lead_filter_count_deltas',
  },
  LEAD_FILTERS,
  leadItem,
);

/** The leads list without filters. */
export const LEAD_PAGE_SQL = LEAD_LIST.unfiltered;

/** A lead's other statements, for a selection: as COMPANY_STATEMENTS (companies.sql.ts). */
export const LEAD_STATEMENTS = new BySelection<SelectedStatements>('leads', (selection) =>
  selectedStatements({
    ...leadItem(selection),
    feed: 'leads',
    changeTable: 'lead_changes',
    key: 'lead',
  }),
);

/** One lead of the workspace, or no row. */
export const LEAD_SQL = LEAD_STATEMENTS.whole.item;

/** A page of the leads' change feed (change-feed-sql.ts). */
export const LEAD_CHANGES_SQL = LEAD_STATEMENTS.whole.changes;

/** The statements of the leads' change stream (change-streams.ts): pages and ranges as lines. */
export const LEAD_CHANGE_STREAM_SQL = LEAD_STATEMENTS.whole.stream;

import { isoDateTime, listPageSql } from '../common/list-page-sql';

/** A page of leads, each with its company's current name, and its total, as JSON text. */
export const LEAD_PAGE_SQL = listPageSql({
  table: 'leads',
  sinceColumn: 'created_at',
  countTable: 'lead_day_counts',
  countColumn: 'leads',
  item: `row.id, row.company_id AS "companyId", company.name AS "companyName",
    row.contact_name AS "contactName", row.contact_title AS "contactTitle",
    row.intent_score AS "intentScore", row.intent_level AS "intentLevel", row.signal,
    row.recommended_action AS "recommendedAction", row.status,
    ${isoDateTime('row.created_at')} AS "createdAt", row.contact_email AS "contactEmail",
    row.assigned_to_id AS "assignedToId"`,
  joins:
    'JOIN companies company ON company.id = row.company_id AND company.workspace_id = row.workspace_id',
});

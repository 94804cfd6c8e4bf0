import { changeFeedSql } from '../changes/change-feed-sql';
import { itemSql } from '../common/item-sql';
import { isoDateTime, listPageSql, type ItemSelect } from '../common/list-page-sql';

/** One company as the API shows it, contacts included: lists, feed and single reads alike. */
const COMPANY: ItemSelect = {
  table: 'companies',
  item: `row.id, row.name, row.domain, row.industry, row.size, row.country, row.city, row.revenue,
    row.siren, row.intent_score AS "intentScore", row.intent_level AS "intentLevel",
    row.icp_score AS "icpScore", row.commercial_score AS "commercialScore",
    row.crm_status AS "crmStatus", row.visits_count AS "visitsCount",
    ${isoDateTime('row.first_seen')} AS "firstSeen", ${isoDateTime('row.last_seen')} AS "lastSeen",
    coalesce(
      (SELECT array_to_json(array_agg(contact ORDER BY contact.seniority, contact.name, contact.id))
        FROM (SELECT id, name, job_title AS "jobTitle", email, phone, linkedin, seniority
          FROM contacts
          WHERE company_id = row.id AND workspace_id = row.workspace_id) contact),
      '[]'
    ) AS contacts`,
};

/** A page of companies with their contacts, and its total, as the response's JSON text. */
export const COMPANY_PAGE_SQL = listPageSql({
  ...COMPANY,
  sinceColumn: 'last_seen',
  countTable: 'company_day_counts',
  countColumn: 'companies',
});

/** One company of the workspace, or no row. */
export const COMPANY_SQL = itemSql(COMPANY);

/** A page of the companies' change feed (change-feed-sql.ts). */
export const COMPANY_CHANGES_SQL = changeFeedSql({
  ...COMPANY,
  feed: 'companies',
  changeTable: 'company_changes',
  key: 'company',
});

import { isoDateTime, listPageSql } from '../common/list-page-sql';

/** A page of companies with their contacts, and its total, as the response's JSON text. */
export const COMPANY_PAGE_SQL = listPageSql({
  table: 'companies',
  sinceColumn: 'last_seen',
  countTable: 'company_day_counts',
  countColumn: 'companies',
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
});

import { FEED_PAGE_MAX_BYTES } from '../../src/changes/change-feed-sql';
import { MAX_CHANGES_LIMIT } from '../../src/changes/changes-query.dto';
import {
  COMPANY_FIELDS,
  CONTACT_FIELDS,
  MAX_CONTACTS_PER_COMPANY,
} from '../../src/companies/company.fields';
import { MAX_LIMIT } from '../../src/http/list-query.dto';
import { ID_MAX_LENGTH } from '../../src/items/fields';
import { LEAD_FIELDS } from '../../src/leads/lead.fields';
import { MAX_PAGES_PER_VISIT, PAGE_VIEW_FIELDS, VISIT_FIELDS } from '../../src/visits/visit.fields';
import { VISIT_PAGE_MAX_BYTES } from '../../src/visits/visits.sql';
import {
  maxArrayBytes,
  maxChangePageBytes,
  maxListPageBytes,
  maxObjectBytes,
  maxVisitPageBytes,
} from './response-size';

/** The largest bodies of the API, in bytes of UTF-8 (response-size.ts; docs/api.md, "Sizes"). */
export function largestResponses() {
  const contact = maxObjectBytes(CONTACT_FIELDS);
  const company = maxObjectBytes(COMPANY_FIELDS, {
    contacts: maxArrayBytes(MAX_CONTACTS_PER_COMPANY, contact),
  });
  const lead = maxObjectBytes(LEAD_FIELDS);
  const pageView = maxObjectBytes(PAGE_VIEW_FIELDS);
  const visit = maxObjectBytes(VISIT_FIELDS, {
    pages: maxArrayBytes(MAX_PAGES_PER_VISIT, pageView),
  });
  return {
    pageView,
    visit,
    visitPage: maxVisitPageBytes(MAX_LIMIT, visit, ID_MAX_LENGTH, VISIT_PAGE_MAX_BYTES),
    visitChangePage: maxChangePageBytes(
      MAX_CHANGES_LIMIT,
      'visit',
      visit,
      ID_MAX_LENGTH,
      FEED_PAGE_MAX_BYTES,
    ),
    contact,
    company,
    lead,
    companyPage: maxListPageBytes(MAX_LIMIT, company),
    leadPage: maxListPageBytes(MAX_LIMIT, lead),
    companyChangePage: maxChangePageBytes(
      MAX_CHANGES_LIMIT,
      'company',
      company,
      ID_MAX_LENGTH,
      FEED_PAGE_MAX_BYTES,
    ),
    leadChangePage: maxChangePageBytes(
      MAX_CHANGES_LIMIT,
      'lead',
      lead,
      ID_MAX_LENGTH,
      FEED_PAGE_MAX_BYTES,
    ),
  };
}

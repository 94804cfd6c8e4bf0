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
import {
  maxArrayBytes,
  maxChangePageBytes,
  maxListPageBytes,
  maxObjectBytes,
} from './response-size';

/** The largest bodies of the API, in bytes of UTF-8 (response-size.ts; docs/api.md, "Sizes"). */
export function largestResponses() {
  const contact = maxObjectBytes(CONTACT_FIELDS);
  const company = maxObjectBytes(COMPANY_FIELDS, {
    contacts: maxArrayBytes(MAX_CONTACTS_PER_COMPANY, contact),
  });
  const lead = maxObjectBytes(LEAD_FIELDS);
  return {
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

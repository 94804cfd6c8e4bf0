import { API_KEY_BY_HASH_SQL, API_KEY_RECORD_USES_SQL } from '../auth/api-keys.sql';
import {
  COMPANY_CHANGE_STREAM_SQL,
  COMPANY_CHANGES_SQL,
  COMPANY_LIST,
  COMPANY_SQL,
} from '../companies/companies.sql';
import { sizedFeedSql } from '../changes/change-feed';
import { COMPANY_SELECTABLE } from '../companies/company.fields';
import { parseFields, type Selection } from '../items/field-selection';
import { DATA_VERSION_STATEMENT } from '../items/item-sql';
import { LEAD_CHANGE_STREAM_SQL, LEAD_CHANGES_SQL, LEAD_LIST, LEAD_SQL } from '../leads/leads.sql';
import { VISIT_SELECTABLE } from '../visits/visit.fields';
import { VISIT_STATEMENTS, visitChangeStatements } from '../visits/visits.sql';
import { Environment } from '../config/environment';

// The filters that the counts know (list-page-sql.ts); `domain` and `q` have statements of their own.
const COUNTED_COMPANY_FILTERS = ['intentLevel', 'crmStatus', 'minIntentScore', 'country'];

// The visit feed's statements with the default retention (the text holds it).
const VISIT_CHANGES = visitChangeStatements(new Environment().VISIT_RETENTION_DAYS).whole;

// A visit list as a CRM shows it: a few fields, and the pages' paths.
const VISIT_SELECTION = parseFields(
  VISIT_SELECTABLE,
  'startedAt,landingPage,pages.path',
) as Selection;

// A selection (`fields`) as a sync asks it: a few fields, and the contacts by field.
const SELECTION = parseFields(COMPANY_SELECTABLE, 'name,domain,contacts.email') as Selection;

/** A statement of the serving path, as its module exports it. */
interface ServingQuery {
  name: string;
  source: string;
  what: string;
  sql: string;
}

/**
 * Every statement a request can run, grouped by the file its rendered text is committed to
 * (src/queries/<file>.sql, written by `npm run queries`). A change to a statement then shows in
 * review as SQL, and a test fails while a committed file differs from what the code renders.
 */
export const SERVING_QUERIES: Record<string, ServingQuery[]> = {
  auth: [
    {
      name: 'API_KEY_BY_HASH_SQL',
      source: 'src/auth/api-keys.sql.ts',
      what: "A key and its workspace by the key's hash: every authenticated request.",
      sql: API_KEY_BY_HASH_SQL,
    },
    {
      name: 'API_KEY_RECORD_USES_SQL',
      source: 'src/auth/api-keys.sql.ts',
      what:
        "The keys' lastUsedAt, at most once a minute each, after the requests that used them " +
        '(auth/key-uses.ts).',
      sql: API_KEY_RECORD_USES_SQL,
    },
  ],
  items: [
    {
      name: 'DATA_VERSION_STATEMENT',
      source: 'src/items/item-sql.ts',
      what:
        "The version of workspace $1's data: a list's or an item's request with If-None-Match " +
        'reads it first (items/conditional-read.guard.ts).',
      sql: DATA_VERSION_STATEMENT,
    },
  ],
  companies: [
    {
      name: 'COMPANY_PAGE_SQL',
      source: 'src/companies/companies.sql.ts',
      what:
        'GET /v1/companies, sized (items/body-budget.ts). $1 workspace, $2 since, $3 limit, ' +
        '$4 offset, $5 the largest body returned (bytes; null: any).',
      sql: COMPANY_LIST.text([]).sized,
    },
    {
      name: 'COMPANY_PAGE_SQL, every filter given',
      source: 'src/companies/companies.sql.ts',
      what:
        "GET /v1/companies with every filter (items/filters.ts): the same, the filters' values " +
        "bound from $5 in their declaration's order, the largest body after them. Fewer filters " +
        'drop their conditions and parameters.',
      sql: COMPANY_LIST.text(COUNTED_COMPANY_FILTERS).sized,
    },
    {
      name: 'COMPANY_PAGE_SQL, domain',
      source: 'src/companies/companies.sql.ts',
      what:
        'GET /v1/companies?domain=: $5 the domains (text[]), $6 the largest body. With `domain` or ' +
        '`q`, the matching rows are found from their index, then counted and ranked.',
      sql: COMPANY_LIST.text(['domain']).sized,
    },
    {
      name: 'COMPANY_PAGE_SQL, q',
      source: 'src/companies/companies.sql.ts',
      what: 'GET /v1/companies?q=: $5 the text, $6 the largest body.',
      sql: COMPANY_LIST.text(['q']).sized,
    },
    {
      name: 'COMPANY_PAGE_SQL, visitedPage',
      source: 'src/companies/companies.sql.ts',
      what:
        "GET /v1/companies?visitedPage=: $5 and $6 the patterns' ranges of paths (text[]), $7 " +
        'visitedSince (null: the default), $8 the retention in days, $9 the largest body. The ' +
        'companies come from visited_paths, the last view of each path by each company.',
      sql: COMPANY_LIST.text(['visitedPage']).sized,
    },
    {
      name: 'COMPANY_PAGE_SQL, visitedPage@early',
      source: 'src/companies/companies.sql.ts',
      what:
        "GET /v1/companies?visitedPage= with a visitedSince within a day of the retention's " +
        'start (items/filters.ts): the same, and the page views of that first day too.',
      sql: COMPANY_LIST.text(['visitedPage@early']).sized,
    },
    {
      name: 'COMPANY_PAGE_SQL, fields',
      source: 'src/companies/companies.sql.ts',
      what:
        'GET /v1/companies?fields=name,domain,contacts.email (items/field-selection.ts): only the ' +
        'selected fields are written, the contacts each with its id and e-mail, in their order. ' +
        'Every read with `fields` writes its items so.',
      sql: COMPANY_LIST.text([], SELECTION).sized,
    },
    {
      name: 'COMPANY_SQL',
      source: 'src/companies/companies.sql.ts',
      what: 'GET /v1/companies/{id}. $1 workspace, $2 id.',
      sql: COMPANY_SQL,
    },
    {
      name: 'COMPANY_CHANGES_SQL',
      source: 'src/companies/companies.sql.ts',
      what:
        'GET /v1/companies/changes, sized (items/body-budget.ts). $1 workspace, $2 txid, $3 id, ' +
        '$4 limit, $5 pass, $6 the largest data returned (bytes; null: any).',
      sql: sizedFeedSql(COMPANY_CHANGES_SQL),
    },
    {
      name: 'COMPANY_CHANGE_STREAM_SQL.lines',
      source: 'src/companies/companies.sql.ts',
      what:
        'GET /v1/companies/changes/stream, its first page (and a page when no range is ahead), sized: ' +
        "the feed's page with its changes as NDJSON lines. Parameters as the page's.",
      sql: sizedFeedSql(COMPANY_CHANGE_STREAM_SQL.lines),
    },
    {
      name: 'COMPANY_CHANGE_STREAM_SQL.range',
      source: 'src/companies/companies.sql.ts',
      what:
        'GET /v1/companies/changes/stream, the pages read ahead, sized: the changes after ($2, $3) up ' +
        'to ($6 txid, $7 id) as NDJSON lines, at most $4; $5 pass, $8 the largest data returned.',
      sql: sizedFeedSql(COMPANY_CHANGE_STREAM_SQL.range, 8),
    },
    {
      name: 'COMPANY_CHANGE_STREAM_SQL.boundaries',
      source: 'src/companies/companies.sql.ts',
      what:
        'GET /v1/companies/changes/stream: where the next $5 pages of $4 changes end, after ($2 txid, ' +
        "$3 id), from the feed's index.",
      sql: COMPANY_CHANGE_STREAM_SQL.boundaries,
    },
  ],
  leads: [
    {
      name: 'LEAD_PAGE_SQL',
      source: 'src/leads/leads.sql.ts',
      what:
        'GET /v1/leads, sized (items/body-budget.ts). $1 workspace, $2 since, $3 limit, ' +
        '$4 offset, $5 the largest body returned (bytes; null: any).',
      sql: LEAD_LIST.text([]).sized,
    },
    {
      name: 'LEAD_PAGE_SQL, every filter given',
      source: 'src/leads/leads.sql.ts',
      what:
        "GET /v1/leads with every filter (items/filters.ts): the same, the filters' values " +
        "bound from $5 in their declaration's order, the largest body after them. Fewer filters " +
        'drop their conditions and parameters.',
      sql: LEAD_LIST.text(Object.keys(LEAD_LIST.filters)).sized,
    },
    {
      name: 'LEAD_SQL',
      source: 'src/leads/leads.sql.ts',
      what: 'GET /v1/leads/{id}. $1 workspace, $2 id.',
      sql: LEAD_SQL,
    },
    {
      name: 'LEAD_CHANGES_SQL',
      source: 'src/leads/leads.sql.ts',
      what:
        'GET /v1/leads/changes, sized (items/body-budget.ts). $1 workspace, $2 txid, $3 id, ' +
        '$4 limit, $5 pass, $6 the largest data returned (bytes; null: any).',
      sql: sizedFeedSql(LEAD_CHANGES_SQL),
    },
    {
      name: 'LEAD_CHANGE_STREAM_SQL.lines',
      source: 'src/leads/leads.sql.ts',
      what:
        'GET /v1/leads/changes/stream, its first page (and a page when no range is ahead), sized: ' +
        "the feed's page with its changes as NDJSON lines. Parameters as the page's.",
      sql: sizedFeedSql(LEAD_CHANGE_STREAM_SQL.lines),
    },
    {
      name: 'LEAD_CHANGE_STREAM_SQL.range',
      source: 'src/leads/leads.sql.ts',
      what:
        'GET /v1/leads/changes/stream, the pages read ahead, sized: the changes after ($2, $3) up ' +
        'to ($6 txid, $7 id) as NDJSON lines, at most $4; $5 pass, $8 the largest data returned.',
      sql: sizedFeedSql(LEAD_CHANGE_STREAM_SQL.range, 8),
    },
    {
      name: 'LEAD_CHANGE_STREAM_SQL.boundaries',
      source: 'src/leads/leads.sql.ts',
      what:
        'GET /v1/leads/changes/stream: where the next $5 pages of $4 changes end, after ($2 txid, ' +
        "$3 id), from the feed's index.",
      sql: LEAD_CHANGE_STREAM_SQL.boundaries,
    },
  ],
  visits: [
    {
      name: 'VISIT_STATEMENTS.list',
      source: 'src/visits/visits.sql.ts',
      what:
        'GET /v1/visits, sized (items/body-budget.ts). $1 workspace, $2 retention (days), $3 since, ' +
        "$4 until, $5 and $6 the cursor's startedAt and id, $7 limit, $8 company ids, $9 and $10 " +
        "the page patterns' ranges (each null when not given), $11 the largest data returned.",
      sql: VISIT_STATEMENTS.whole.list,
    },
    {
      name: 'VISIT_STATEMENTS.companyList',
      source: 'src/visits/visits.sql.ts',
      what:
        'GET /v1/companies/{id}/visits: the same, $8 the company alone, and whether the workspace ' +
        'has it.',
      sql: VISIT_STATEMENTS.whole.companyList,
    },
    {
      name: 'VISIT_STATEMENTS.list, fields',
      source: 'src/visits/visits.sql.ts',
      what: 'GET /v1/visits?fields=startedAt,landingPage,pages.path: only those fields written.',
      sql: VISIT_STATEMENTS.for(VISIT_SELECTION).list,
    },
    {
      name: 'VISIT_STATEMENTS.item',
      source: 'src/visits/visits.sql.ts',
      what: 'GET /v1/visits/{id}, sized. $1 workspace, $2 retention (days), $3 id, $4 the largest body.',
      sql: VISIT_STATEMENTS.whole.item,
    },
    {
      name: 'VISIT_CHANGES_SQL',
      source: 'src/visits/visits.sql.ts',
      what:
        "GET /v1/visits/changes, sized, as the other feeds' pages: each visit looked up in its " +
        'month, the visits past the retention (395 days by default, in the text) left out.',
      sql: sizedFeedSql(VISIT_CHANGES.changes),
    },
    {
      name: 'VISIT_CHANGE_STREAM_SQL.range',
      source: 'src/visits/visits.sql.ts',
      what: 'GET /v1/visits/changes/stream, the pages read ahead, as the other streams.',
      sql: sizedFeedSql(VISIT_CHANGES.stream.range, 8),
    },
    {
      name: 'VISIT_CHANGE_STREAM_SQL.boundaries',
      source: 'src/visits/visits.sql.ts',
      what: 'GET /v1/visits/changes/stream: where the next pages end, from the feed index.',
      sql: VISIT_CHANGES.stream.boundaries,
    },
  ],
};

/** The committed text of src/queries/<file>.sql. */
export function renderQueries(file: string): string {
  const header = `-- Generated by \`npm run queries\` from the statements of the serving path: do not edit.\n`;
  const body = SERVING_QUERIES[file]
    .map(({ name, source, what, sql }) => `-- ${name} (${source})\n-- ${what}\n${sql};\n`)
    .join('\n');
  return `${header}\n${body}`;
}

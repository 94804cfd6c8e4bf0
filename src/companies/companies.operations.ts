import { streamOperation } from '../changes/stream/stream-read.decorator';
import type { ReadOperation } from '../items/json-read.decorator';
import { CompanyChangePageDto, CompanyUpsertedDto } from './dto/company-change-page.dto';
import { CompanyPageDto } from './dto/company-page.dto';
import { CompanyDto, SelectedCompanyDto } from './dto/company.dto';
import { wholeOrSelected } from '../items/field-dto';
import { VISITED_SINCE_DEFAULT_DAYS } from './company.fields';

/** The companies' reads as the OpenAPI document states them (CompaniesController). */
export const LIST_COMPANIES: ReadOperation = {
  versioned: true,
  operationId: 'listCompanies',
  summary: 'List the identified companies, hottest first',
  description:
    "The companies identified on the workspace's website, with their contacts, sorted by " +
    '`intentScore` descending (ties by `id`). `since` keeps the companies whose `lastSeen` is ' +
    'at or after it; `visitedPage` those that viewed a page (`visitedSince`, by default the last ' +
    `${VISITED_SINCE_DEFAULT_DAYS} days), which needs the \`visits:read\` scope too.`,
  ok: CompanyPageDto,
  okDescription: 'A page of companies.',
  scopes: ['companies:read'],
  parameterScopes: { visitedPage: ['visits:read'] },
};

export const COMPANY_CHANGES: ReadOperation = {
  operationId: 'companyChanges',
  summary: 'Follow every change to the companies, deletions included',
  description:
    "The change feed of the workspace's companies, for keeping a copy in sync without losing " +
    'anything. Start without `cursor`: every live company comes as an upsert. Follow `nextCursor` ' +
    'while `hasMore` is true, upsert by `id`, remove on `delete`; store the cursor after ' +
    'applying a page, and poll with it later. Each company appears once, at its latest change, ' +
    'with its current state; an update that changes nothing is not a change. A change to one of its contacts is a change of the company. ' +
    'Nothing is skipped whatever the order in which concurrent writers commit; a transaction ' +
    'that runs long holds back the changes committed after it started until it ends.',
  ok: CompanyChangePageDto,
  okDescription: 'A page of changes, possibly empty.',
  gone: true,
  scopes: ['companies:read', 'changes:read'],
};

export const GET_COMPANY: ReadOperation = {
  versioned: true,
  operationId: 'getCompany',
  summary: 'Read one company',
  description:
    'The company with this id, the same object as in the list. Takes `fields` alone: any other query parameter is a 400.',
  ok: {
    json: wholeOrSelected(CompanyDto, SelectedCompanyDto),
    models: [CompanyDto, SelectedCompanyDto],
  },
  okDescription: 'The company.',
  scopes: ['companies:read'],
  notFound:
    "No company of the key's workspace has this id (whether or not another workspace has one): " +
    'the same response in both cases.',
};

export const COMPANY_CHANGE_STREAM = streamOperation({
  item: 'company',
  operationId: 'companyChangeStream',
  upserted: CompanyUpsertedDto,
  scopes: ['companies:read', 'changes:read'],
});

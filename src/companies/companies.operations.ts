import type { StreamOperation } from '../changes/stream-read.decorator';
import type { ReadOperation } from '../items/json-read.decorator';
import { CompanyChangePageDto, CompanyUpsertedDto } from './dto/company-change-page.dto';
import { CompanyPageDto } from './dto/company-page.dto';
import { CompanyDto } from './dto/company.dto';

/** The companies' reads as the OpenAPI document states them (CompaniesController). */
export const LIST_COMPANIES: ReadOperation = {
  versioned: true,
  operationId: 'listCompanies',
  summary: 'List the identified companies, hottest first',
  description:
    "The companies identified on the workspace's website, with their contacts, sorted by " +
    '`intentScore` descending (ties by `id`). `since` keeps the companies whose `lastSeen` is ' +
    'at or after it.',
  ok: CompanyPageDto,
  okDescription: 'A page of companies.',
  scopes: ['companies:read'],
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
    'The company with this id, the same object as in the list. Takes no query parameter: any is a 400.',
  ok: CompanyDto,
  okDescription: 'The company.',
  scopes: ['companies:read'],
  notFound:
    "No company of the key's workspace has this id (whether or not another workspace has one): " +
    'the same response in both cases.',
};

export const COMPANY_CHANGE_STREAM: StreamOperation = {
  operationId: 'companyChangeStream',
  summary: 'The whole company change feed in one request, as it is read',
  description:
    'The whole change feed in one response, as newline-delimited JSON: every change the pages ' +
    "would return, in the same order, one per line (exactly the objects of the pages' `data`), " +
    'a checkpoint line `{"cursor": ...}` after each batch (at most 1,000 changes apart), and a ' +
    'last line `{"cursor": ..., "hasMore": ...}` once it ends normally: caught up (`false`), or ' +
    'at its time bound (5 minutes by default) or the instance shutting down (`true`: continue ' +
    'at once with its cursor). A stream without that last line was cut: resume from the last ' +
    'checkpoint whose changes you applied. Without `cursor` it starts at the beginning, every ' +
    "live item as an upsert; with one (a page's `nextCursor` or a stream's), after it. One " +
    'request against the rate limit and one of the in-flight places while it runs; at most 2 ' +
    'streams of a workspace at once per instance. Compressed (br, gzip) as `Accept-Encoding` ' +
    'allows, flushed as it goes.',
  upserted: CompanyUpsertedDto,
  okDescription:
    'Newline-delimited JSON (`application/x-ndjson`): each line one change, a checkpoint or the ' +
    'last line.',
  scopes: ['companies:read', 'changes:read'],
  perWorkspace: 2,
};

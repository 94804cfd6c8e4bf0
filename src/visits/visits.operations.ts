import { streamOperation } from '../changes/stream/stream-read.decorator';
import type { ReadOperation } from '../items/json-read.decorator';
import { VisitChangePageDto, VisitUpsertedDto } from './dto/visit-change-page.dto';
import { wholeOrSelected } from '../items/field-dto';
import { VisitPageDto } from './dto/visit-page.dto';
import { SelectedVisitDto, VisitDto } from './dto/visit.dto';

/*
 * The visits' reads as the OpenAPI document states them (VisitsController). Their ETags are made
 * from the body, as the feeds' are (items/conditional-read.guard.ts): what a visit list holds
 * changes with time alone, as visits leave the retention.
 */

const LIST_ORDER =
  'Newest first: `startedAt` descending, ties by `id` descending (byte order). Paged by cursor: ' +
  'follow `nextCursor` while `hasMore` is true, sending the same filters; new visits sort before ' +
  'the first page, so paging a window while visits arrive repeats and skips none. Only visits ' +
  'within the retention are listed.';

export const LIST_VISITS: ReadOperation = {
  operationId: 'listVisits',
  summary: 'List the visits, newest first',
  description:
    "The visits of the workspace's identified companies to its website, each with its page " +
    `views. ${LIST_ORDER}`,
  ok: VisitPageDto,
  okDescription: 'A page of visits.',
  scopes: ['visits:read'],
};

export const LIST_COMPANY_VISITS: ReadOperation = {
  operationId: 'listCompanyVisits',
  summary: "List a company's visits, newest first",
  description: `The visits of one company of the workspace, each with its page views. ${LIST_ORDER}`,
  ok: VisitPageDto,
  okDescription: 'A page of the company’s visits (possibly empty).',
  scopes: ['visits:read'],
  notFound:
    "No company of the key's workspace has this id (whether or not another workspace has one): " +
    'the same response in both cases.',
};

export const GET_VISIT: ReadOperation = {
  operationId: 'getVisit',
  summary: 'Read one visit',
  description:
    'The visit with this id, the same object as in the lists. Takes `fields` alone: any other ' +
    'query parameter is a 400.',
  ok: {
    json: wholeOrSelected(VisitDto, SelectedVisitDto),
    models: [VisitDto, SelectedVisitDto],
  },
  okDescription: 'The visit.',
  scopes: ['visits:read'],
  notFound:
    "No visit of the key's workspace has this id within the retention (whether or not another " +
    'workspace has one): the same response in every case.',
};

export const VISIT_CHANGES: ReadOperation = {
  operationId: 'visitChanges',
  summary: 'Follow every change to the visits, deletions included',
  description:
    "The change feed of the workspace's visits, for keeping a copy in sync without losing " +
    'anything. Start without `cursor`: every visit within the retention comes as an upsert. ' +
    'Follow `nextCursor` while `hasMore` is true, upsert by `id`, remove on `delete`; store the ' +
    'cursor after applying a page, and poll with it later. Each visit appears once, at its latest ' +
    'change, pages included; a visit written again identical is not a change, and a deleted ' +
    "company's visits each come as a delete. A visit that leaves by the retention gets no " +
    'delete: a copy drops its visits that started before the retention itself. Nothing is ' +
    'skipped whatever the order in which concurrent writers commit.',
  ok: VisitChangePageDto,
  okDescription: 'A page of changes, possibly empty.',
  gone: true,
  scopes: ['visits:read', 'changes:read'],
};

export const VISIT_CHANGE_STREAM = streamOperation({
  item: 'visit',
  operationId: 'visitChangeStream',
  upserted: VisitUpsertedDto,
  scopes: ['visits:read', 'changes:read'],
});

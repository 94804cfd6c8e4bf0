import type { StreamOperation } from '../changes/stream-read.decorator';
import type { ReadOperation } from '../items/json-read.decorator';
import { LeadChangePageDto, LeadUpsertedDto } from './dto/lead-change-page.dto';
import { LeadPageDto } from './dto/lead-page.dto';
import { LeadDto } from './dto/lead.dto';

/** The leads' reads as the OpenAPI document states them (LeadsController). */
export const LIST_LEADS: ReadOperation = {
  versioned: true,
  operationId: 'listLeads',
  summary: 'List the qualified leads, hottest first',
  description:
    'The qualified leads of the workspace, sorted by `intentScore` descending (ties by `id`). ' +
    '`since` keeps the leads whose `createdAt` is at or after it.',
  ok: LeadPageDto,
  okDescription: 'A page of leads.',
  scopes: ['leads:read'],
};

export const LEAD_CHANGES: ReadOperation = {
  operationId: 'leadChanges',
  summary: 'Follow every change to the leads, deletions included',
  description:
    "The change feed of the workspace's leads, for keeping a copy in sync without losing " +
    'anything. Start without `cursor`: every live lead comes as an upsert. Follow `nextCursor` ' +
    'while `hasMore` is true, upsert by `id`, remove on `delete`; store the cursor after ' +
    'applying a page, and poll with it later. Each lead appears once, at its latest change, ' +
    "with its current state; an update that changes nothing is not a change. Deleting a company deletes its leads: each gets its delete here. A change of its company's name is a change of the lead. " +
    'Nothing is skipped whatever the order in which concurrent writers commit; a transaction ' +
    'that runs long holds back the changes committed after it started until it ends.',
  ok: LeadChangePageDto,
  okDescription: 'A page of changes, possibly empty.',
  gone: true,
  scopes: ['leads:read', 'changes:read'],
};

export const GET_LEAD: ReadOperation = {
  versioned: true,
  operationId: 'getLead',
  summary: 'Read one lead',
  description:
    'The lead with this id, the same object as in the list. Takes no query parameter: any is a 400.',
  ok: LeadDto,
  okDescription: 'The lead.',
  scopes: ['leads:read'],
  notFound:
    "No lead of the key's workspace has this id (whether or not another workspace has one): " +
    'the same response in both cases.',
};

export const LEAD_CHANGE_STREAM: StreamOperation = {
  operationId: 'leadChangeStream',
  summary: 'The whole lead change feed in one request, as it is read',
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
  upserted: LeadUpsertedDto,
  okDescription:
    'Newline-delimited JSON (`application/x-ndjson`): each line one change, a checkpoint or the ' +
    'last line.',
  scopes: ['leads:read', 'changes:read'],
  perWorkspace: 2,
};

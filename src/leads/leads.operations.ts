import { streamOperation } from '../changes/stream/stream-read.decorator';
import type { ReadOperation } from '../items/json-read.decorator';
import { LeadChangePageDto, LeadUpsertedDto } from './dto/lead-change-page.dto';
import { LeadPageDto } from './dto/lead-page.dto';
import { LeadDto, SelectedLeadDto } from './dto/lead.dto';
import { wholeOrSelected } from '../items/field-dto';

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
    'The lead with this id, the same object as in the list. Takes `fields` alone: any other query parameter is a 400.',
  ok: { json: wholeOrSelected(LeadDto, SelectedLeadDto), models: [LeadDto, SelectedLeadDto] },
  okDescription: 'The lead.',
  scopes: ['leads:read'],
  notFound:
    "No lead of the key's workspace has this id (whether or not another workspace has one): " +
    'the same response in both cases.',
};

export const LEAD_CHANGE_STREAM = streamOperation({
  item: 'lead',
  operationId: 'leadChangeStream',
  upserted: LeadUpsertedDto,
  scopes: ['leads:read', 'changes:read'],
});

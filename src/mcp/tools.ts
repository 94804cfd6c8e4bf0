import type { Type } from '@nestjs/common';
import type { AuthenticatedWorkspace } from '../auth/workspace.decorator';
import { COMPANY_CHANGES, GET_COMPANY, LIST_COMPANIES } from '../companies/companies.operations';
import type { CompaniesService } from '../companies/companies.service';
import { CompanyListQueryDto } from '../companies/dto/company-list-query.dto';
import { CompanyChangesQueryDto, CompanyQueryDto } from '../companies/dto/company-read-queries.dto';
import type { ReadOperation } from '../items/json-read.decorator';
import { NoQueryDto } from '../http/no-query.dto';
import { LeadListQueryDto } from '../leads/dto/lead-list-query.dto';
import { LeadChangesQueryDto, LeadQueryDto } from '../leads/dto/lead-read-queries.dto';
import { GET_LEAD, LEAD_CHANGES, LIST_LEADS } from '../leads/leads.operations';
import type { LeadsService } from '../leads/leads.service';
import { GET_ME } from '../me/me.operations';
import { VisitListQueryDto, VisitQueryDto } from '../visits/dto/visit-read-queries.dto';
import { GET_VISIT, LIST_VISITS } from '../visits/visits.operations';
import type { VisitsService } from '../visits/visits.service';

/** What the tools call: the REST controllers' own services (the same SQL, the same isolation). */
export interface ToolServices {
  companies: CompaniesService;
  leads: LeadsService;
  visits: VisitsService;
}

/** A page size of a tool when it is not REST's: a page of companies is many tokens. */
export interface ToolLimit {
  default: number;
  maximum: number;
}

/**
 * One read-only tool: a REST operation under a name an agent reads well. Its description, scopes,
 * input and output schemas are the operation's (tool-schemas.ts); `call` is the controller's call.
 */
export interface ToolDefinition {
  name: string;
  title: string;
  operation: ReadOperation;
  /** The DTO of the operation's query, validated exactly as REST validates it. */
  query: Type<object>;
  limit?: ToolLimit;
  /** The noun of the summary line ("companies", "lead changes"). */
  noun: string;
  /**
   * A list's order, as its summary line states it. A page of a list paged by cursor that has one
   * ends on its last page; a feed (no order) is caught up and polled again with its cursor.
   */
  order?: string;
  call(
    services: ToolServices,
    workspace: AuthenticatedWorkspace,
    id: string,
    query: never,
  ): unknown;
}

// 20 companies with their contacts are 15 to 30 KB of JSON: enough for an agent to act on, and
// within what a model's context takes comfortably. REST's default is 50, its maximum 200.
const LIST_LIMIT: ToolLimit = { default: 20, maximum: 50 };
const FEED_LIMIT: ToolLimit = { default: 50, maximum: 200 };

export const TOOLS: ToolDefinition[] = [
  {
    name: 'get_workspace',
    title: 'The workspace of this key',
    operation: GET_ME,
    query: NoQueryDto,
    noun: 'workspace',
    call: (_services, workspace) => ({
      id: workspace.id,
      name: workspace.name,
      plan: workspace.plan,
    }),
  },
  {
    name: 'list_companies',
    title: 'List identified companies, hottest first',
    operation: LIST_COMPANIES,
    query: CompanyListQueryDto,
    limit: LIST_LIMIT,
    noun: 'companies',
    order: 'intentScore descending',
    call: ({ companies }, workspace, _id, query: CompanyListQueryDto) =>
      companies.list(workspace.id, query),
  },
  {
    name: 'get_company',
    title: 'Read one company with its contacts',
    operation: GET_COMPANY,
    query: CompanyQueryDto,
    noun: 'company',
    call: ({ companies }, workspace, id, query: CompanyQueryDto) =>
      companies.get(workspace.id, id, query.fields),
  },
  {
    name: 'list_company_changes',
    title: 'Follow the changes to the companies',
    operation: COMPANY_CHANGES,
    query: CompanyChangesQueryDto,
    limit: FEED_LIMIT,
    noun: 'company changes',
    call: ({ companies }, workspace, _id, query: CompanyChangesQueryDto) =>
      companies.changes(workspace.id, query),
  },
  {
    name: 'list_leads',
    title: 'List qualified leads, hottest first',
    operation: LIST_LEADS,
    query: LeadListQueryDto,
    limit: LIST_LIMIT,
    noun: 'leads',
    order: 'intentScore descending',
    call: ({ leads }, workspace, _id, query: LeadListQueryDto) => leads.list(workspace.id, query),
  },
  {
    name: 'get_lead',
    title: 'Read one lead',
    operation: GET_LEAD,
    query: LeadQueryDto,
    noun: 'lead',
    call: ({ leads }, workspace, id, query: LeadQueryDto) =>
      leads.get(workspace.id, id, query.fields),
  },
  {
    name: 'list_lead_changes',
    title: 'Follow the changes to the leads',
    operation: LEAD_CHANGES,
    query: LeadChangesQueryDto,
    limit: FEED_LIMIT,
    noun: 'lead changes',
    call: ({ leads }, workspace, _id, query: LeadChangesQueryDto) =>
      leads.changes(workspace.id, query),
  },
  // No feed tool for the visits: an agent asks what happened in a window, with `since` (the
  // reason in docs/agents.md, "Visits").
  {
    name: 'list_visits',
    title: 'List the visits to the website, newest first',
    operation: LIST_VISITS,
    query: VisitListQueryDto,
    limit: LIST_LIMIT,
    noun: 'visits',
    order: 'newest first',
    call: ({ visits }, workspace, _id, query: VisitListQueryDto) =>
      visits.list(workspace.id, query),
  },
  {
    name: 'get_visit',
    title: 'Read one visit with its page views',
    operation: GET_VISIT,
    query: VisitQueryDto,
    noun: 'visit',
    call: ({ visits }, workspace, id, query: VisitQueryDto) =>
      visits.get(workspace.id, id, query.fields),
  },
];

/**
 * The first line of a tool's text: what the result holds and how to get what follows, so that an
 * agent reading the text alone knows its next call.
 */
export function summaryLine(tool: ToolDefinition, body: Record<string, unknown>): string {
  if ('total' in body && Array.isArray(body.data)) {
    const { total, offset, data } = body as { total: number; offset: number; data: unknown[] };
    if (data.length === 0) {
      return `No ${tool.noun} on this page: ${total} match in all (offset ${offset}).`;
    }
    const last = offset + data.length;
    const next =
      last < total
        ? `Next page: call ${tool.name} with offset ${last} and the same other arguments.`
        : 'This is the last page.';
    return `${capitalized(tool.noun)} ${offset + 1} to ${last} of ${total}, ${String(tool.order)}. ${next}`;
  }
  if ('nextCursor' in body && Array.isArray(body.data) && tool.order !== undefined) {
    const { data, hasMore, nextCursor } = body as {
      data: unknown[];
      hasMore: boolean;
      nextCursor: string | null;
    };
    const next = hasMore
      ? `Next page: call ${tool.name} with cursor "${String(nextCursor)}" and the same other arguments.`
      : 'This is the last page.';
    return `${data.length} ${tool.noun}, ${tool.order}. ${next}`;
  }
  if ('nextCursor' in body && Array.isArray(body.data)) {
    const { data, hasMore, nextCursor } = body as {
      data: unknown[];
      hasMore: boolean;
      nextCursor: string;
    };
    const next = hasMore
      ? `More are waiting: call ${tool.name} with cursor "${nextCursor}".`
      : `Caught up: call ${tool.name} later with cursor "${nextCursor}" for what changes next.`;
    return `${data.length} ${tool.noun}. ${next}`;
  }
  const { id, name } = body as { id?: unknown; name?: unknown };
  const label = typeof name === 'string' ? ` (${name})` : '';
  return `The ${tool.noun} ${String(id)}${label}.`;
}

function capitalized(text: string): string {
  return `${text[0].toUpperCase()}${text.slice(1)}`;
}

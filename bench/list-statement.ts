import { parseFields, type Selectable, type Selection } from '../src/items/field-selection';
import { givenFilters, parseFilter } from '../src/items/filters';
import type { ListStatements } from '../src/items/list-page';
import { Environment } from '../src/config/environment';
import type { SignedCursors } from '../src/items/signed-cursors';
import { VISIT_STATEMENTS } from '../src/visits/visits.sql';

/** The retention the servers run with: the configuration's default. */
export const VISIT_RETENTION_DAYS = new Environment().VISIT_RETENTION_DAYS;

/**
 * A list request's statement and its values, as the service runs them (unsized), from the
 * request's query string: the bare server serves lists with it, and pgbench runs the same. The
 * filters' values are bound as the service binds them (givenFilters), `visitedPage`'s four
 * included.
 */
export function listStatement(
  list: ListStatements,
  selectable: Selectable,
  workspaceId: string,
  query: URLSearchParams,
): [string, unknown[]] {
  const parsed: Record<string, unknown> = {};
  for (const name of Object.keys(list.filters).filter((name) => query.has(name))) {
    const given = query.getAll(name);
    // The benchmark sends valid values only: parsed, never refused.
    parsed[name] = parseFilter(name, list.filters[name], given.length > 1 ? given : given[0]);
  }
  const visitedSince = query.get('visitedSince');
  if (visitedSince !== null) parsed.visitedSince = new Date(visitedSince);
  const filters = givenFilters(list.filters, parsed, { visitRetentionDays: VISIT_RETENTION_DAYS });
  const since = query.get('since');
  const fields = query.getAll('fields');
  const selection =
    fields.length === 0 ? undefined : (parseFields(selectable, fields) as Selection);
  return [
    list.text(filters.names, selection).plain,
    [
      workspaceId,
      since === null ? null : new Date(since),
      Number(query.get('limit') ?? 50),
      Number(query.get('offset') ?? 0),
      ...filters.values,
    ],
  ];
}

/** A company's visit list: its path, the company's id captured. */
export const COMPANY_VISITS = /^\/v1\/companies\/([^/]+)\/visits$/;

/**
 * A visit list request's statement (sized: its cap comes last) and its values before the cap, as
 * src/visits/visits.service.ts binds them, with the cursor opened by `cursors` under the list's
 * scope; `scope` signs the page's next cursor.
 */
export function visitListStatement(
  workspaceId: string,
  path: string,
  query: URLSearchParams,
  cursors: SignedCursors,
): { sql: string; values: unknown[]; scope: string; company: boolean } {
  const company = COMPANY_VISITS.exec(path)?.[1];
  const scope = company === undefined ? 'visits' : `company-visits:${company}`;
  const cursor = query.get('cursor');
  const position = cursor === null ? undefined : cursors.open(scope, workspaceId, cursor);
  const space = position?.indexOf(' ') ?? -1;
  const date = (name: string) => (query.has(name) ? new Date(query.get(name) as string) : null);
  const statements = VISIT_STATEMENTS.for(undefined);
  return {
    sql: company === undefined ? statements.list : statements.companyList,
    values: [
      workspaceId,
      VISIT_RETENTION_DAYS,
      date('since'),
      date('until'),
      position === undefined ? null : position.slice(0, space),
      position === undefined ? null : position.slice(space + 1),
      Number(query.get('limit') ?? 50),
      company === undefined ? null : [company],
      null,
      null,
    ],
    scope,
    company: company !== undefined,
  };
}

import { parseFields, type Selectable, type Selection } from '../src/items/field-selection';
import { givenFilters, parseFilter } from '../src/items/filters';
import type { ListStatements } from '../src/items/list-page';
import { Environment } from '../src/config/environment';

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

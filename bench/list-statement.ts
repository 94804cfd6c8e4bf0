import { parseFields, type Selectable, type Selection } from '../src/items/field-selection';
import { parseFilter } from '../src/items/filters';
import type { ListStatements } from '../src/items/list-page';

/**
 * A list request's statement and its values, as the service runs them (unsized), from the
 * request's query string: the bare server serves lists with it, and pgbench runs the same.
 */
export function listStatement(
  list: ListStatements,
  selectable: Selectable,
  workspaceId: string,
  query: URLSearchParams,
): [string, (string | number | Date | string[] | null)[]] {
  const names = Object.keys(list.filters).filter((name) => query.has(name));
  const values = names.map((name) => {
    const given = query.getAll(name);
    // The benchmark sends valid values only: parsed, never refused.
    return parseFilter(name, list.filters[name], given.length > 1 ? given : given[0]) as
      string | number | string[];
  });
  const since = query.get('since');
  const fields = query.getAll('fields');
  const selection =
    fields.length === 0 ? undefined : (parseFields(selectable, fields) as Selection);
  return [
    list.text(names, selection).plain,
    [
      workspaceId,
      since === null ? null : new Date(since),
      Number(query.get('limit') ?? 50),
      Number(query.get('offset') ?? 0),
      ...values,
    ],
  ];
}

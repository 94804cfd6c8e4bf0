import type { Queryable } from '../database/queryable';
import { type JsonText, jsonText, type VersionedJson } from '../http/json-text';
import type { ListQueryDto } from '../http/list-query.dto';
import type { FieldsQuery } from './fields-query';
import { type BodyRoom, sizedSql } from './body-budget';
import { type Selection, selectionKey } from './field-selection';
import { type Filters, filtersSql, givenFilters, type ListContext, namedFilters } from './filters';
import type { ItemSelect } from './item-sql';
import { keptStatements } from './kept-statements';
import { listPageSql, type ListPageSql } from './list-page-sql';

/**
 * A list's statements (list-page-sql.ts): the unfiltered one, and one per combination of the
 * filters a request gives, each written once and kept (6 filters: at most 64 texts), so that the
 * planner sees only the conditions that apply; with a selection of fields (field-selection.ts),
 * the same with only the selected fields written, kept with the other statements made from a
 * request (kept-statements.ts).
 */
export class ListStatements {
  /** The statement without filters: the benchmark's bare server and pgbench run it too. */
  readonly unfiltered: string;
  private readonly whole = new Map<string, ListTexts>();

  constructor(
    private readonly tables: Omit<ListPageSql, keyof ItemSelect> & { table: string },
    readonly filters: Filters,
    private readonly item: (selection?: Selection) => ItemSelect,
  ) {
    this.unfiltered = listPageSql({ ...tables, ...item() });
  }

  /**
   * The statement for these filters (named in declaration order, as givenFilters names them: a
   * variant as `name@variant`) and this selection (none: every field), plain and sized: the sized
   * one returns the body only up to a cap, bytes or null for any size, bound after the filters.
   */
  text(filterNames: string[], selection?: Selection): ListTexts {
    const key = filterNames.join(',');
    if (selection !== undefined) {
      return keptStatements(`list ${this.tables.table}:${key}|${selectionKey(selection)}`, () =>
        this.make(filterNames, selection),
      );
    }
    let text = this.whole.get(key);
    if (text === undefined) {
      text = this.make(filterNames, undefined);
      this.whole.set(key, text);
    }
    return text;
  }

  private make(filterNames: string[], selection: Selection | undefined): ListTexts {
    const { sql: filters, next } = filtersSql(namedFilters(this.filters, filterNames), 5);
    const plain =
      filters.length === 0 && selection === undefined
        ? this.unfiltered
        : listPageSql({ ...this.tables, ...this.item(selection) }, filters);
    return { plain, sized: sizedSql(plain, 'body', ['version'], next) };
  }
}

/** A list statement's text, plain and sized (body-budget.ts). */
interface ListTexts {
  plain: string;
  sized: string;
}

/**
 * Runs a list's statement for the query's filters: the response body as PostgreSQL wrote it,
 * sized: a large body is read only once its heap is reserved in `room` (body-budget.ts). With the
 * version of the workspace's data it was read with, unless a filter makes the answer depend on the
 * time of the request too (visitedPage's window): the ETag is then the body's.
 */
export async function listPage<T>(
  database: Queryable,
  list: ListStatements,
  workspaceId: string,
  query: ListQueryDto & FieldsQuery,
  room: BodyRoom,
  context: ListContext,
): Promise<VersionedJson<T> | JsonText<T>> {
  const { since, limit, offset, fields } = query;
  const filters = givenFilters(list.filters, query as unknown as Record<string, unknown>, context);
  const sql = list.text(filters.names, fields);
  const values = [workspaceId, since ?? null, limit, offset, ...filters.values];
  const row = await room.budget.read(
    room.key,
    async (cap) =>
      (
        await database.query<{ body: string | null; version: string; bytes: number }>(sql.sized, [
          ...values,
          cap,
        ])
      )[0],
    (found) => found.body,
  );
  const json = jsonText<T>(row?.body as string);
  return filters.timed ? json : { json, version: row?.version as string };
}

import type { Queryable } from '../database/queryable';
import { jsonText, type VersionedJson } from '../http/json-text';
import type { ListQueryDto } from '../http/list-query.dto';
import { type BodyRoom, sizedSql } from './body-budget';
import { type Filters, filterSql, givenFilters } from './filters';
import { listPageSql, type ListPageSql } from './list-page-sql';

/**
 * A list's statements (list-page-sql.ts): the unfiltered one, and one per combination of the
 * filters a request gives, each written once and kept (4 filters: at most 16 texts), so that the
 * planner sees only the conditions that apply.
 */
export class ListStatements {
  /** The statement without filters: the benchmark's bare server and pgbench run it too. */
  readonly unfiltered: string;
  private readonly texts = new Map<string, { plain: string; sized: string }>();

  constructor(
    private readonly select: ListPageSql,
    readonly filters: Filters,
  ) {
    this.unfiltered = listPageSql(select);
  }

  /**
   * The statement for these filters (named in declaration order), plain and sized: the sized one
   * returns the body only up to a cap, bytes or null for any size, bound after the filters.
   */
  text(filterNames: string[]): { plain: string; sized: string } {
    const key = filterNames.join(',');
    let text = this.texts.get(key);
    if (text === undefined) {
      const filters = filterNames.map((name, i) => filterSql(this.filters[name], 5 + i));
      const plain = filters.length === 0 ? this.unfiltered : listPageSql(this.select, filters);
      text = { plain, sized: sizedSql(plain, 'body', ['version'], 5 + filters.length) };
      this.texts.set(key, text);
    }
    return text;
  }
}

/**
 * Runs a list's statement for the query's filters: the response body as PostgreSQL wrote it,
 * sized: a large body is read only once its heap is reserved in `room` (body-budget.ts).
 */
export async function listPage<T>(
  database: Queryable,
  list: ListStatements,
  workspaceId: string,
  query: ListQueryDto,
  room: BodyRoom,
): Promise<VersionedJson<T>> {
  const { since, limit, offset } = query;
  const filters = givenFilters(list.filters, query as unknown as Record<string, unknown>);
  const sql = list.text(filters.names);
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
  return { json: jsonText<T>(row?.body as string), version: row?.version as string };
}

import type { PrismaService } from '../prisma/prisma.service';
import type { JsonText } from './json-text';
import type { ListQueryDto } from './list-query.dto';

/** The parameters of a list's SQL (list-page-sql.ts), in order. */
export function listPageParameters(
  workspaceId: string,
  { since, limit, offset }: ListQueryDto,
): [string, Date | null, number, number] {
  return [workspaceId, since ?? null, limit, offset];
}

/** Runs a list's statement: the response body as PostgreSQL wrote it. */
export async function listPage<T>(
  prisma: PrismaService,
  sql: string,
  workspaceId: string,
  query: ListQueryDto,
): Promise<JsonText<T>> {
  const [row] = await prisma.query<{ body: string }>(sql, listPageParameters(workspaceId, query));
  return row.body;
}

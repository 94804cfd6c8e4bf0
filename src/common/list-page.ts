import type { PrismaService } from '../prisma/prisma.service';
import type { JsonText } from './json-text';
import type { ListQueryDto } from './list-query.dto';

/** The parameters of a list's SQL (list-page-sql.ts), in order. */
export function listPageParameters(
  workspaceId: string,
  { since, limit, offset }: ListQueryDto,
): [string, Date | null, number, bigint] {
  // A bigint, so that an offset up to 2^53 - 1 reaches PostgreSQL exactly as an int8.
  return [workspaceId, since ?? null, limit, BigInt(offset)];
}

/** Runs a list's statement: the response body as PostgreSQL wrote it. */
export async function listPage<T>(
  prisma: PrismaService,
  sql: string,
  workspaceId: string,
  query: ListQueryDto,
): Promise<JsonText<T>> {
  // Every value is a bound parameter: nothing of the request is spliced into the text.
  const [row] = await prisma.$queryRawUnsafe<[{ body: string }]>(
    sql,
    ...listPageParameters(workspaceId, query),
  );
  return row.body;
}

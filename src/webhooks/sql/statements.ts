import type { ClientBase } from 'pg';

/*
 * The webhooks' statements, one file per use (as graphile-worker keeps its src/sql/): the admin
 * tool's (endpoints.sql.ts), the dispatcher's (dispatch.sql.ts: changes to events), the delivery
 * worker's (delivery.sql.ts: claim, record). Each statement is beside the function that runs it
 * and the type of its rows: a caller names its arguments, never a `$n`. Endpoints hold xid8
 * positions, which Prisma cannot write, so the admin side uses SQL too.
 */

/** Where a statement runs: a pool, or the client of a transaction. */
export type PoolOrClient = Pick<ClientBase, 'query'>;

/** The rows of a statement run with these values. */
export async function rowsOf<Row>(
  sql: PoolOrClient,
  text: string,
  values: unknown[],
): Promise<Row[]> {
  return (await sql.query(text, values)).rows as Row[];
}

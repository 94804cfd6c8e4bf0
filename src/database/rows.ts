import type { ClientBase } from 'pg';

/** Where a statement runs: a pool, or the client of a transaction. */
export type PoolOrClient = Pick<ClientBase, 'query'>;

/**
 * The rows of a statement run with these values: for the statements beside the function that runs
 * them and the type of their rows (the webhooks' in webhooks/sql/ and worker/sql/), whose callers
 * name their arguments, never a `$n`.
 */
export async function rowsOf<Row>(
  client: PoolOrClient,
  text: string,
  values: unknown[],
): Promise<Row[]> {
  return (await client.query(text, values)).rows as Row[];
}

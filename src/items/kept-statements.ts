import { RecentlyUsed } from '../common/recently-used';

/*
 * The statement texts made from what a request asks, which a client may vary without end: a
 * resource's statements for a selection of fields (field-selection.ts), a list's for a selection
 * and a combination of filters (list-page.ts), a feed statement sized (changes/change-feed.ts).
 * Sync jobs and agents ask the same few over and over, so each is made on first use and the
 * KEPT_STATEMENTS used last are kept, in one bound for the whole process; one made again costs
 * microseconds. An entry weighs 3 to 22 KB of text (measured: a list's texts for one selection 3
 * to 7 KB, a feed page statement sized 6 KB, a company's other statements for one selection
 * 21 KB), so what is kept stays under 6 MB.
 */
export const KEPT_STATEMENTS = 256;

const kept = new RecentlyUsed<unknown>(KEPT_STATEMENTS);

/**
 * The statements kept under `key`, or those `make` makes, kept. A key names its maker first
 * (`list companies:...`), so that one key is always made by the same code, to the same type; but a
 * statement's text, the key of its sized text (change-feed.ts), begins with `WITH`.
 */
export function keptStatements<T>(key: string, make: () => T): T {
  return kept.get(key, make) as T;
}

/** How many are kept now, for the tests. */
export function keptStatementCount(): number {
  return kept.size;
}

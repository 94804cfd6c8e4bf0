import { Injectable } from '@nestjs/common';
import { Client } from 'pg';
import { Environment } from '../config/environment';

export interface VisitPruneResult {
  olderThanDays: number;
  /** Visits that started before this instant are past the retention. */
  before: Date;
  /** The months dropped (`2025-10`): every visit of each started before `before`. */
  dropped: string[];
  /** The months made ahead (and any missing within the retention). */
  made: number;
  /** The visit feed's rows of visits past the retention, removed (the feed no longer shows them). */
  changes: number;
}

/** Months ahead that always exist, so that the import never waits to make one. */
export const MONTHS_AHEAD = 2;

const DAY_MS = 86_400_000;

// Rows of visit_changes deleted, or of visited_paths computed again, per statement: short
// transactions, whatever the count.
const CHANGES_BATCH = 10_000;

// The partitions as visit_partitions_make names them: `visits_2026_11`, `page_views_2026_11`.
const PARTITION = /^(visits|page_views)_(\d{4})_(\d{2})$/;

/**
 * `prune-visits`: the retention of visits by whole months. A month's partitions (visits and their
 * page views) are dropped once the month has wholly passed the retention: `DETACH PARTITION ...
 * CONCURRENTLY`, which waits for the reads that may see the month and never blocks one (a read
 * started meanwhile no longer opens it), then DROP TABLE of the table detached. Page views first,
 * then their visits. A run cut short leaves a detach pending or a table detached: the next one
 * finishes (FINALIZE) and drops it. A month dropped fires no trigger: the rows of visited_paths
 * (each company's latest view of each path) whose latest view it may have held are then computed
 * again from the page views kept. It then makes the months ahead (visit_partitions_make), and
 * removes the visit feed's rows of visits past the retention (which the feed already leaves out:
 * a visit that leaves by the retention gets no delete).
 *
 * DETACH ... CONCURRENTLY runs outside a transaction and may wait: on a connection of its own,
 * on DATABASE_MIGRATION_URL when set (a direct one, not through a pooler in transaction mode),
 * without the API's statement timeout.
 */
@Injectable()
export class VisitPruningService {
  constructor(private readonly environment: Environment) {}

  async prune(olderThanDays: number): Promise<VisitPruneResult> {
    const { DATABASE_MIGRATION_URL, DATABASE_URL } = this.environment;
    const client = new Client({ connectionString: DATABASE_MIGRATION_URL || DATABASE_URL });
    await client.connect();
    try {
      await client.query('SET statement_timeout = 0');
      const {
        rows: [{ before }],
      } = await client.query<{ before: Date }>(
        'SELECT now() - make_interval(days => $1::integer) AS before',
        [olderThanDays],
      );
      const dropped = new Set<string>();
      for (const table of await expired(client, before)) {
        if (table.attached) {
          const mode = table.pending ? 'FINALIZE' : 'CONCURRENTLY';
          await client.query(
            `ALTER TABLE "${table.parent}" DETACH PARTITION "${table.name}" ${mode}`,
          );
        }
        await client.query(`DROP TABLE IF EXISTS "${table.name}"`);
        dropped.add(table.month);
      }
      await recomputeVisitedPaths(client);
      const {
        rows: [{ made }],
      } = await client.query<{ made: number }>(
        `SELECT visit_partitions_make(now() - make_interval(days => $1::integer),
          now() + make_interval(months => $2::integer)) AS made`,
        [olderThanDays, MONTHS_AHEAD],
      );
      // The feed leaves out a visit past the retention already; its row goes, in batches.
      let changes = 0;
      for (;;) {
        const { rowCount } = await client.query(
          `DELETE FROM visit_changes WHERE ctid = ANY(ARRAY(
            SELECT ctid FROM visit_changes WHERE started_at < $1 LIMIT ${CHANGES_BATCH}))`,
          [before],
        );
        changes += rowCount ?? 0;
        if ((rowCount ?? 0) < CHANGES_BATCH) break;
      }
      return { olderThanDays, before, dropped: [...dropped].sort(), made, changes };
    } finally {
      await client.end();
    }
  }
}

interface ExpiredTable {
  name: string;
  parent: 'visits' | 'page_views';
  month: string;
  /** Still a partition (or being detached), rather than a table a cut run left detached. */
  attached: boolean;
  /** A detach begun and not finished. */
  pending: boolean;
}

/**
 * The months' tables wholly before `before`, page views first: the partitions of either table,
 * and the tables of that name a run left detached (no longer partitions).
 */
async function expired(client: Client, before: Date): Promise<ExpiredTable[]> {
  const { rows } = await client.query<{ name: string; attached: boolean; pending: boolean }>(
    `SELECT c.relname AS name, c.relispartition AS attached,
      coalesce((SELECT i.inhdetachpending FROM pg_inherits i WHERE i.inhrelid = c.oid), false) AS pending
    FROM pg_class c
    WHERE c.relkind = 'r' AND c.relnamespace = current_schema()::regnamespace
      AND c.relname ~ '^(visits|page_views)_[0-9]{4}_[0-9]{2}$'`,
  );
  return rows
    .flatMap((row) => {
      const [, parent, year, month] = PARTITION.exec(row.name) ?? [];
      if (parent === undefined) return [];
      const end = Date.UTC(Number(year), Number(month), 1);
      if (end > before.getTime()) return [];
      return [{ ...row, parent: parent as ExpiredTable['parent'], month: `${year}-${month}` }];
    })
    .sort((a, b) =>
      a.parent === b.parent ? a.name.localeCompare(b.name) : a.parent === 'page_views' ? -1 : 1,
    );
}

/**
 * Computes again, in batches, the rows of visited_paths whose latest view may be in a month no
 * longer kept: those before the first kept month's start plus 24 hours (a page view is at most
 * 24 hours after its visit's start, and every visit kept starts in a kept month), with the lock
 * and the statement of their own that the page views' delete trigger uses
 * (visited_paths_recompute, migration 20261206000000_visited_paths). Each run does it, so that
 * a run cut after its drops leaves nothing behind: the rows on the first kept day are few.
 */
async function recomputeVisitedPaths(client: Client): Promise<void> {
  const { rows: kept } = await client.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
    WHERE i.inhparent = 'page_views'::regclass AND NOT i.inhdetachpending`,
  );
  const starts = kept.flatMap(({ name }) => {
    const [, , year, month] = PARTITION.exec(name) ?? [];
    return year === undefined ? [] : [Date.UTC(Number(year), Number(month) - 1, 1)];
  });
  const bound = new Date((starts.length > 0 ? Math.min(...starts) : Date.now()) + DAY_MS);
  let after = ['', '', ''];
  for (;;) {
    const { rows } = await client.query<{ w: string; c: string; p: string; l: Date }>(
      `SELECT workspace_id AS w, company_id AS c, path AS p, last_viewed_at AS l FROM visited_paths
      WHERE last_viewed_at < $1 AND (workspace_id, company_id, path) > ($2, $3, $4)
      ORDER BY workspace_id, company_id, path LIMIT ${CHANGES_BATCH}`,
      [bound, ...after],
    );
    if (rows.length === 0) break;
    await client.query(
      'SELECT visited_paths_recompute($1::text[], $2::text[], $3::text[], $4::timestamptz[])',
      [rows.map((r) => r.w), rows.map((r) => r.c), rows.map((r) => r.p), rows.map((r) => r.l)],
    );
    const last = rows[rows.length - 1];
    after = [last.w, last.c, last.p];
    if (rows.length < CHANGES_BATCH) break;
  }
}

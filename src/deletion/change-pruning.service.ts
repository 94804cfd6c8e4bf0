import { Injectable } from '@nestjs/common';
import { Prisma } from '../generated/prisma/client';
import { PrismaService } from '../prisma/prisma.service';

type Feed = 'companies' | 'leads' | 'visits';

/** The change table of each feed (migration 20261124000000_change_feeds). */
const CHANGE_TABLES: Record<Feed, string> = {
  companies: 'company_changes',
  leads: 'lead_changes',
  visits: 'visit_changes',
};

export interface PruneResult {
  olderThanDays: number;
  /** Deletion records last changed before this instant were pruned. */
  before: Date;
  /** Deletion records pruned, per feed. */
  pruned: Record<Feed, number>;
  /** Rows of workspaces that no longer exist, removed whatever their age or kind. */
  deletedWorkspaces: Record<Feed, number> & { horizons: number };
}

const TRANSACTION_TIMEOUT_MS = 5 * 60_000;

/**
 * `prune-changes`: the change feeds keep a deletion record per deleted item until this removes
 * it, once older than the retention (CHANGES_RETENTION_DAYS). A client whose cursor is before a
 * pruned record may have missed that deletion: the same transaction moves the workspace's horizon
 * for the feed (change_horizons) up to the greatest position pruned, and the feed answers 410 to
 * any cursor before it. Upserts are never pruned: they are the items' current positions.
 */
@Injectable()
export class ChangePruningService {
  constructor(private readonly prisma: PrismaService) {}

  async prune(olderThanDays: number): Promise<PruneResult> {
    return this.prisma.$transaction(
      async (tx) => {
        await tx.$executeRaw`SET LOCAL statement_timeout = '2min'`;
        // now() is the transaction's start: the same instant for every statement below.
        const [{ before }] = await tx.$queryRaw<{ before: Date }[]>`
          SELECT now() - make_interval(days => ${olderThanDays}::int) AS before`;
        const deletedWorkspaces = await removeDeletedWorkspaces(tx);
        return {
          olderThanDays,
          before,
          pruned: {
            companies: await pruneFeed(tx, 'companies', olderThanDays),
            leads: await pruneFeed(tx, 'leads', olderThanDays),
            visits: await pruneFeed(tx, 'visits', olderThanDays),
          },
          deletedWorkspaces,
        };
      },
      { timeout: TRANSACTION_TIMEOUT_MS, maxWait: 10_000 },
    );
  }
}

/**
 * Deletes one feed's deletion records older than the retention and raises each affected
 * workspace's horizon to the greatest (txid, id) it deleted, unless the horizon is already
 * greater (rows compare field by field; GREATEST does not take rows). A record that an item's
 * re-creation turns back into an upsert meanwhile is left alone: the DELETE re-checks `deleted`
 * on the row it waited for.
 */
async function pruneFeed(
  tx: Prisma.TransactionClient,
  feed: Feed,
  olderThanDays: number,
): Promise<number> {
  const table = Prisma.raw(`"${CHANGE_TABLES[feed]}"`);
  const [{ pruned }] = await tx.$queryRaw<{ pruned: number }[]>`
    WITH pruned AS (
      DELETE FROM ${table}
      WHERE deleted AND changed_at < now() - make_interval(days => ${olderThanDays}::int)
      RETURNING workspace_id, id, txid
    ), greatest_pruned AS (
      SELECT DISTINCT ON (workspace_id) workspace_id, txid, id
      FROM pruned
      ORDER BY workspace_id, txid DESC, id DESC
    ), horizons AS (
      INSERT INTO change_horizons (workspace_id, feed, pruned_txid, pruned_id)
      SELECT workspace_id, ${feed}, txid, id FROM greatest_pruned ORDER BY workspace_id
      ON CONFLICT (workspace_id, feed) DO UPDATE
        SET pruned_txid = excluded.pruned_txid, pruned_id = excluded.pruned_id
        WHERE (excluded.pruned_txid, excluded.pruned_id)
          > (change_horizons.pruned_txid, change_horizons.pruned_id)
    )
    SELECT count(*)::int AS pruned FROM pruned`;
  return pruned;
}

/**
 * Deleting a workspace deletes its items (the triggers record them as deleted) but the change
 * tables have no foreign key to workspaces: their rows, and the horizons, go here.
 */
async function removeDeletedWorkspaces(
  tx: Prisma.TransactionClient,
): Promise<PruneResult['deletedWorkspaces']> {
  const [counts] = await tx.$queryRaw<PruneResult['deletedWorkspaces'][]>`
    WITH companies AS (
      DELETE FROM company_changes change
      WHERE NOT EXISTS (SELECT FROM workspaces w WHERE w.id = change.workspace_id)
      RETURNING 1
    ), leads AS (
      DELETE FROM lead_changes change
      WHERE NOT EXISTS (SELECT FROM workspaces w WHERE w.id = change.workspace_id)
      RETURNING 1
    ), visits AS (
      DELETE FROM visit_changes change
      WHERE NOT EXISTS (SELECT FROM workspaces w WHERE w.id = change.workspace_id)
      RETURNING 1
    ), horizons AS (
      DELETE FROM change_horizons horizon
      WHERE NOT EXISTS (SELECT FROM workspaces w WHERE w.id = horizon.workspace_id)
      RETURNING 1
    )
    SELECT
      (SELECT count(*)::int FROM companies) AS companies,
      (SELECT count(*)::int FROM leads) AS leads,
      (SELECT count(*)::int FROM visits) AS visits,
      (SELECT count(*)::int FROM horizons) AS horizons`;
  return counts;
}

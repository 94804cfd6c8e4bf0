import { BadRequestException, Injectable, NotFoundException } from '@nestjs/common';
import { PrismaService } from '../prisma/prisma.service';

/** The ids to delete from one workspace; any list may be empty, not all. */
export interface DeletionRequest {
  companies: string[];
  leads: string[];
  visits: string[];
}

/** What went of one kind of item: those named, those that went with their company. */
export interface CascadedCounts {
  /** Named in the request (also when their company was deleted too). */
  listed: number;
  /** The others of the deleted companies, which went with them. */
  ofDeletedCompanies: number;
  total: number;
}

/** What a deletion removed. Every lead is counted once, in `listed` or in `ofDeletedCompanies`. */
export interface DeletionCounts {
  workspaceId: string;
  companies: number;
  /** The contacts of the deleted companies, which went with them. */
  contacts: number;
  leads: CascadedCounts;
  /** Visits, with their page views (migration 20261202000000_visits). */
  visits: CascadedCounts;
}

/** Refused: some ids are not items of the workspace (whether or not they exist elsewhere). */
export class DeletionRefusedException extends BadRequestException {
  constructor(
    workspaceId: string,
    readonly unknown: DeletionRequest,
  ) {
    const lists = (['companies', 'leads', 'visits'] as const)
      .filter((kind) => unknown[kind].length > 0)
      .map((kind) => `${kind} ${unknown[kind].join(', ')}`);
    super(
      `delete refused, nothing was deleted: not in workspace ${workspaceId}: ${lists.join('; ')}`,
    );
  }
}

// One transaction for the whole request; as for the import, longer than Prisma's default (5 s) and
// than the pool's statement_timeout (5 s, for the API's requests), for a company with many leads.
const TRANSACTION_TIMEOUT_MS = 5 * 60_000;

/**
 * Deletes companies (their contacts, leads and visits go with them, by the foreign keys' cascade),
 * leads and visits of one workspace, all or nothing. The change feeds' triggers record each deleted company
 * and lead, so that clients of the feeds receive a `delete` for each.
 */
@Injectable()
export class DeletionService {
  constructor(private readonly prisma: PrismaService) {}

  async delete(workspaceId: string, request: DeletionRequest): Promise<DeletionCounts> {
    const companies = [...new Set(request.companies)];
    const leads = [...new Set(request.leads)];
    const visits = [...new Set(request.visits)];
    return this.prisma.$transaction(
      async (tx) => {
        const workspace = await tx.workspace.findUnique({
          where: { id: workspaceId },
          select: { id: true },
        });
        if (!workspace) throw new NotFoundException(`workspace ${workspaceId} does not exist`);
        await tx.$executeRaw`SET LOCAL statement_timeout = '2min'`;

        // The items, locked until the end (in id order, so that two deletions cannot deadlock):
        // what is found now is what the DELETEs below remove. An id of another workspace is not
        // found, exactly like an id that does not exist.
        const foundCompanies = await tx.$queryRaw<{ id: string }[]>`
          SELECT id FROM companies
          WHERE workspace_id = ${workspaceId} AND id = ANY(${companies}::text[])
          ORDER BY id FOR UPDATE`;
        const foundLeads = await tx.$queryRaw<{ id: string }[]>`
          SELECT id FROM leads
          WHERE workspace_id = ${workspaceId} AND id = ANY(${leads}::text[])
          ORDER BY id FOR UPDATE`;
        const foundVisits = await tx.$queryRaw<{ id: string }[]>`
          SELECT id FROM visits
          WHERE workspace_id = ${workspaceId} AND id = ANY(${visits}::text[])
          ORDER BY id FOR UPDATE`;
        const unknown = {
          companies: missing(companies, foundCompanies),
          leads: missing(leads, foundLeads),
          visits: missing(visits, foundVisits),
        };
        if (Object.values(unknown).some((ids) => ids.length > 0)) {
          throw new DeletionRefusedException(workspaceId, unknown);
        }

        // What the cascade will take, locked too: a contact or lead cannot move to another
        // company before the DELETE, so these counts are exactly what goes. (A new one cannot be
        // added to a locked company: its foreign key check waits for this transaction.)
        const [cascade] = await tx.$queryRaw<{ contacts: number; leads: number; visits: number }[]>`
          SELECT
            (SELECT count(*)::int FROM (
              SELECT FROM contacts
              WHERE workspace_id = ${workspaceId} AND company_id = ANY(${companies}::text[])
              FOR UPDATE) locked) AS contacts,
            (SELECT count(*)::int FROM (
              SELECT FROM leads
              WHERE workspace_id = ${workspaceId} AND company_id = ANY(${companies}::text[])
                AND NOT id = ANY(${leads}::text[])
              FOR UPDATE) locked) AS leads,
            (SELECT count(*)::int FROM (
              SELECT FROM visits
              WHERE workspace_id = ${workspaceId} AND company_id = ANY(${companies}::text[])
                AND NOT id = ANY(${visits}::text[])
              FOR UPDATE) locked) AS visits`;

        const deletedLeads = await tx.$executeRaw`
          DELETE FROM leads WHERE workspace_id = ${workspaceId} AND id = ANY(${leads}::text[])`;
        const deletedVisits = await tx.$executeRaw`
          DELETE FROM visits WHERE workspace_id = ${workspaceId} AND id = ANY(${visits}::text[])`;
        const deletedCompanies = await tx.$executeRaw`
          DELETE FROM companies
          WHERE workspace_id = ${workspaceId} AND id = ANY(${companies}::text[])`;
        return {
          workspaceId,
          companies: deletedCompanies,
          contacts: cascade.contacts,
          leads: {
            listed: deletedLeads,
            ofDeletedCompanies: cascade.leads,
            total: deletedLeads + cascade.leads,
          },
          visits: {
            listed: deletedVisits,
            ofDeletedCompanies: cascade.visits,
            total: deletedVisits + cascade.visits,
          },
        };
      },
      { timeout: TRANSACTION_TIMEOUT_MS, maxWait: 10_000 },
    );
  }
}

/** The ids, in the order given, that are not among the rows found. */
function missing(ids: string[], found: { id: string }[]): string[] {
  const foundIds = new Set(found.map((row) => row.id));
  return ids.filter((id) => !foundIds.has(id));
}

import { Client } from 'pg';
import { adminOn } from '../../support/admin';
import { createTestApp, type TestApp } from '../../support/app';
import { createCompany } from '../../support/factories';
import { createTenant, getWithKey } from '../../support/http';
import { until } from '../../support/until';
import {
  daysAgo,
  importVisitLines,
  plus,
  type VisitLine,
  visitLine,
} from '../../support/visit-records';

/*
 * `admin prune-visits` drops a month while the API reads visits (docs/admin.md, "Pruning
 * visits"): the detach waits for the reads that may see the month and blocks none, so a reader
 * never waits on it nor gets an error. A transaction that has read the old month stays open while
 * the prune runs, so the prune waits on it for as long as the test likes; meanwhile the reads of
 * the visits and of the companies by page, in a loop, must each answer 200 (a lock that queued
 * them behind the prune would hold them past the statement timeout).
 */

const DAY_MS = 86_400_000;
const RETENTION_DAYS = 395;

/** The first instant of the UTC month `months` after the month of `at`. */
function monthStart(at: number, months = 0): string {
  const date = new Date(at);
  return new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + months, 1)).toISOString();
}

const READS = [
  '/v1/visits',
  '/v1/visits?page=/pricing',
  '/v1/companies?visitedPage=/pricing',
  '/v1/companies?visitedPage=/*&visitedSince=2000-01-01T00:00:00Z',
];

describe('prune-visits while the API reads visits', () => {
  let t: TestApp;
  const { cliJson } = adminOn(() => t);
  let key: string;
  let workspaceId: string;
  let old: VisitLine;
  let recent: VisitLine[];

  beforeAll(async () => {
    t = await createTestApp({ env: { RATE_LIMIT_PER_MINUTE: '1000000' } });
    const tenant = await createTenant(t.prisma);
    key = tenant.key;
    workspaceId = tenant.workspace.id;
    const company = await createCompany(t.prisma, workspaceId);
    // A month wholly past the retention, imported under a longer one (which makes its partitions).
    const startedAt = plus(monthStart(Date.now() - RETENTION_DAYS * DAY_MS, -2), 3_600_000);
    old = visitLine(company.id, { startedAt });
    old.pages = old.pages.map((page) => ({ ...page, viewedAt: startedAt }));
    recent = [visitLine(company.id), visitLine(company.id, { startedAt: daysAgo(5) })];
    await importVisitLines(t.database.url, workspaceId, [old, ...recent], {
      VISIT_RETENTION_DAYS: '800',
    });
  }, 60_000);

  afterAll(async () => {
    await t.close();
  });

  it('every read answers 200 while the prune waits and drops the month, and the prune succeeds', async () => {
    const oldMonth = old.startedAt.slice(0, 7);
    // A reader of the old month: a transaction open on both tables' partitions, the old ones too.
    const reader = new Client({ connectionString: t.database.directUrl });
    await reader.connect();
    await reader.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
    const held = await reader.query<{ n: number }>(
      `SELECT (SELECT count(*) FROM visits WHERE workspace_id = $1)::int
        + (SELECT count(*) FROM page_views WHERE workspace_id = $1)::int AS n`,
      [workspaceId],
    );
    expect(held.rows[0].n).toBe(9);

    const statuses: { path: string; status: number; body: unknown }[] = [];
    let pruned = false;
    const reads = (async () => {
      for (let round = 0; !pruned; round++) {
        const path = READS[round % READS.length];
        const response = await getWithKey(t.app, path, key);
        statuses.push({ path, status: response.status, body: response.body as unknown });
      }
    })();

    const prune = cliJson('prune-visits').finally(() => {
      pruned = true;
    });
    // The prune waits on the reader's transaction (a detach waits for the reads that may see the
    // month); the reads go on meanwhile.
    const session = new Client({ connectionString: t.database.directUrl });
    await session.connect();
    try {
      await until('the prune to wait on the reader', async () => {
        const { rows } = await session.query(
          `SELECT FROM pg_stat_activity
           WHERE query LIKE 'ALTER TABLE % DETACH PARTITION %' AND wait_event_type = 'Lock'`,
        );
        return rows.length > 0;
      });
      const waiting = statuses.length;
      await until(
        'reads to complete while the prune waits',
        // Or a read that failed: the assertion below names it.
        () =>
          statuses.length >= waiting + 2 * READS.length ||
          statuses.slice(waiting).some((read) => read.status !== 200),
        { detail: () => JSON.stringify(statuses.slice(waiting)) },
      );
      expect(pruned).toBe(false);
    } finally {
      await session.end();
      await reader.query('COMMIT');
      await reader.end();
    }

    await expect(prune).resolves.toMatchObject({ dropped: expect.arrayContaining([oldMonth]) });
    await reads;
    expect(statuses.filter((read) => read.status !== 200)).toEqual([]);
    const last = await getWithKey(t.app, '/v1/visits', key);
    expect((last.body.data as { id: string }[]).map((visit) => visit.id).sort()).toEqual(
      recent.map((visit) => visit.id).sort(),
    );
  }, 120_000);
});

import fc from 'fast-check';
import { Client } from 'pg';
import { createTestApp, type TestApp } from '../../support/app';
import { createCompany, createWorkspace } from '../../support/factories';
import { propertyOptions } from '../../support/fast-check';
import { until } from '../../support/until';

/*
 * visited_paths, what `visitedPage` reads (migration 20261206000000_visited_paths): each
 * company's latest view of each path, kept by triggers whoever writes page views. Checked here
 * against the page views themselves after every write of generated histories (inserts, deletes,
 * updates, a visit replaced as the import replaces it, a company deleted), and under the race
 * the triggers' lock is for: a delete of a latest view while another transaction adds an
 * earlier one. The months `prune-visits` drops: test/e2e/admin/prune-visits.e2e-spec.ts.
 */

const PATHS = ['/', '/pricing', '/blog/a'];
const COMPANIES = 3;
const MINUTE = 60_000;

let t: TestApp;
let db: Client;

beforeAll(async () => {
  t = await createTestApp();
  db = new Client({ connectionString: t.database.directUrl });
  await db.connect();
});

afterAll(async () => {
  await db.end();
  await t.close();
});

/** The table, and what the page views make it, for one workspace. */
async function bothSides(workspaceId: string) {
  const { rows: kept } = await db.query(
    `SELECT company_id, path, last_viewed_at AS last FROM visited_paths
     WHERE workspace_id = $1 ORDER BY company_id, path`,
    [workspaceId],
  );
  const { rows: truth } = await db.query(
    `SELECT company_id, path, max(viewed_at) AS last FROM page_views
     WHERE workspace_id = $1 GROUP BY company_id, path ORDER BY company_id, path`,
    [workspaceId],
  );
  return { kept, truth };
}

interface PageSeed {
  path: string;
  /** After the visit's start. */
  minutes: number;
}

/** Inserts a visit of `companyId` that started `startedMinutesAgo`, with its pages. */
async function insertVisit(
  client: Client,
  workspaceId: string,
  id: string,
  companyId: string,
  startedMinutesAgo: number,
  pages: PageSeed[],
): Promise<void> {
  const startedAt = new Date(Date.now() - startedMinutesAgo * MINUTE);
  await client.query(
    `INSERT INTO visits (workspace_id, id, company_id, started_at, ended_at, page_view_count,
       landing_page, device_type)
     VALUES ($1, $2, $3, $4, $4::timestamptz + interval '24 hours', $5, $6, 'desktop')`,
    [workspaceId, id, companyId, startedAt, pages.length, pages[0].path],
  );
  await client.query(
    `INSERT INTO page_views (workspace_id, visit_id, visit_started_at, position, company_id,
       hostname, path, viewed_at)
     SELECT $1, $2, $3, p.position - 1, $4, 'www.example.com', p.path,
       $3::timestamptz + p.minutes * interval '1 minute'
     FROM unnest($5::text[], $6::int[]) WITH ORDINALITY AS p(path, minutes, position)`,
    [
      workspaceId,
      id,
      startedAt,
      companyId,
      pages.map((page) => page.path),
      pages.map((page) => page.minutes),
    ],
  );
}

const pageSeed = fc.record({
  path: fc.constantFrom(...PATHS),
  minutes: fc.integer({ min: 0, max: 600 }),
});
const pagesSeed = fc.array(pageSeed, { minLength: 1, maxLength: 4 });
const visitSeed = fc.record({
  company: fc.nat(COMPANIES - 1),
  // Within the last month: its partitions exist (the migration makes them).
  startedMinutesAgo: fc.integer({ min: 700, max: 40_000 }),
  pages: pagesSeed,
});

type Operation =
  | { kind: 'insert'; visit: { company: number; startedMinutesAgo: number; pages: PageSeed[] } }
  | { kind: 'deleteVisit'; which: number }
  | { kind: 'replaceVisit'; which: number; pages: PageSeed[] }
  | { kind: 'updatePage'; which: number; path: string; minutes: number }
  | { kind: 'deleteCompany'; company: number };

const operation: fc.Arbitrary<Operation> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('insert' as const), visit: visitSeed }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('deleteVisit' as const), which: fc.nat() }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('replaceVisit' as const),
      which: fc.nat(),
      pages: pagesSeed,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('updatePage' as const),
      which: fc.nat(),
      path: fc.constantFrom(...PATHS),
      minutes: fc.integer({ min: 0, max: 600 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('deleteCompany' as const),
      company: fc.nat(COMPANIES - 1),
    }),
  },
);

it('holds the latest view of each company and path after every write of generated histories', async () => {
  let run = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(operation, { minLength: 1, maxLength: 12 }), async (operations) => {
      const workspace = await createWorkspace(t.prisma);
      const companyIds: string[] = [];
      for (let i = 0; i < COMPANIES; i++) {
        companyIds.push((await createCompany(t.prisma, workspace.id)).id);
      }
      run++;
      let n = 0;
      for (const op of operations) {
        const { rows: visits } = await db.query<{ id: string; company_id: string; started: Date }>(
          `SELECT id, company_id, started_at AS started FROM visits WHERE workspace_id = $1 ORDER BY id`,
          [workspace.id],
        );
        const chosen = 'which' in op ? visits[op.which % Math.max(visits.length, 1)] : undefined;
        if (op.kind === 'insert') {
          const { company, startedMinutesAgo, pages } = op.visit;
          await insertVisit(
            db,
            workspace.id,
            `vi_${run}_${n++}`,
            companyIds[company],
            startedMinutesAgo,
            pages,
          );
        } else if (op.kind === 'deleteCompany') {
          // Its visits go by the foreign key's cascade, their page views by visits' trigger.
          await db.query('DELETE FROM companies WHERE workspace_id = $1 AND id = $2', [
            workspace.id,
            companyIds[op.company],
          ]);
          companyIds[op.company] = (await createCompany(t.prisma, workspace.id)).id;
        } else if (chosen === undefined) {
          continue;
        } else if (op.kind === 'deleteVisit') {
          await db.query('DELETE FROM visits WHERE workspace_id = $1 AND id = $2', [
            workspace.id,
            chosen.id,
          ]);
        } else if (op.kind === 'replaceVisit') {
          // As the import replaces a visit: deleted and written again in one transaction.
          await db.query('BEGIN');
          await db.query('DELETE FROM visits WHERE workspace_id = $1 AND id = $2', [
            workspace.id,
            chosen.id,
          ]);
          const minutesAgo = Math.round((Date.now() - chosen.started.getTime()) / MINUTE);
          await insertVisit(db, workspace.id, chosen.id, chosen.company_id, minutesAgo, op.pages);
          await db.query('COMMIT');
        } else {
          await db.query(
            `UPDATE page_views SET path = $3, viewed_at = visit_started_at + $4 * interval '1 minute'
             WHERE workspace_id = $1 AND visit_id = $2 AND position = 0`,
            [workspace.id, chosen.id, op.path, op.minutes],
          );
        }
        const { kept, truth } = await bothSides(workspace.id);
        expect(kept).toStrictEqual(truth);
      }
    }),
    propertyOptions(25),
  );
}, 180_000);

it('counts a page view added while a delete of the latest view waits for its row', async () => {
  const workspace = await createWorkspace(t.prisma);
  const company = await createCompany(t.prisma, workspace.id);
  // /pricing viewed 5 and 3 days ago: its row holds the view of 3 days ago.
  await insertVisit(db, workspace.id, 'vi_five', company.id, 5 * 1440, [
    { path: '/pricing', minutes: 0 },
  ]);
  await insertVisit(db, workspace.id, 'vi_three', company.id, 3 * 1440, [
    { path: '/pricing', minutes: 0 },
  ]);

  const adder = new Client({ connectionString: t.database.directUrl });
  const deleter = new Client({ connectionString: t.database.directUrl });
  await adder.connect();
  await deleter.connect();
  try {
    // Adds a view of 4 days ago, not committed: it does not raise the row, but locks it.
    await adder.query('BEGIN');
    await insertVisit(adder, workspace.id, 'vi_four', company.id, 4 * 1440, [
      { path: '/pricing', minutes: 0 },
    ]);
    const {
      rows: [{ pid }],
    } = await deleter.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    // Deletes the view of 3 days ago: its row must now come from the views left.
    const deleted = deleter.query('DELETE FROM visits WHERE workspace_id = $1 AND id = $2', [
      workspace.id,
      'vi_three',
    ]);
    await until('the delete waiting for the row', async () => {
      const { rows } = await db.query(
        "SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock'",
        [pid],
      );
      return rows.length > 0;
    });
    await adder.query('COMMIT');
    await deleted;
  } finally {
    await adder.end();
    await deleter.end();
  }

  const { kept, truth } = await bothSides(workspace.id);
  expect(kept).toStrictEqual(truth);
  const fourDaysAgo = (truth[0] as { last: Date }).last.getTime();
  expect(Math.round((Date.now() - fourDaysAgo) / (1440 * MINUTE))).toBe(4);
});

it('empties with the page views', async () => {
  const workspace = await createWorkspace(t.prisma);
  const company = await createCompany(t.prisma, workspace.id);
  await insertVisit(db, workspace.id, 'vi_emptied', company.id, 1440, [{ path: '/', minutes: 0 }]);
  expect((await bothSides(workspace.id)).kept).toHaveLength(1);
  await db.query('TRUNCATE visits');
  const { rows } = await db.query('SELECT count(*)::int AS n FROM visited_paths');
  expect(rows[0]).toStrictEqual({ n: 0 });
});

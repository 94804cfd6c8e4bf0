import { adminOn, expectRefusal } from '../../support/admin';
import { createTestApp, type TestApp } from '../../support/app';
import { createCompany } from '../../support/factories';
import { createTenant, getWithKey } from '../../support/http';
import {
  daysAgo,
  importVisitLines,
  fromNow,
  plus,
  type VisitLine,
  visitLine,
} from '../../support/visit-records';

// The admin tool's commands of the visits' retention and deletion (docs/admin.md, "Pruning
// visits" and "Deleting data"): `prune-visits` drops whole months (partitions) past the
// retention and makes the months ahead; `delete` takes visits, and a company's visits with it.

const DAY_MS = 86_400_000;
const RETENTION_DAYS = 395;

/** The UTC month of an instant, as prune-visits names it (`2025-10`). */
function monthOf(iso: string | number): string {
  return new Date(iso).toISOString().slice(0, 7);
}

/** The first instant of the UTC month `months` after the month of `iso`. */
function monthStart(iso: string | number, months = 0): string {
  const date = new Date(iso);
  return new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + months, 1)).toISOString();
}

/** A month's partition of `table`, as the migration names it (`visits_2025_10`). */
const partition = (table: 'visits' | 'page_views', month: string) =>
  `${table}_${month.replace('-', '_')}`;

describe('admin tool: prune-visits and the deletion of visits', () => {
  let t: TestApp;
  const { cli, cliJson } = adminOn(() => t);

  beforeAll(async () => {
    t = await createTestApp();
  }, 60_000);

  afterAll(async () => {
    await t.close();
  });

  /** `import-visits` of these lines from standard input, which must succeed. */
  const importVisits = (workspaceId: string, lines: VisitLine[], env?: Record<string, string>) =>
    importVisitLines(t.database.url, workspaceId, lines, env);

  /** The partitions of visits and page_views, by name (pg_inherits). */
  async function partitions(): Promise<string[]> {
    const rows = await t.prisma.$queryRaw<{ name: string }[]>`
      SELECT c.relname AS name FROM pg_inherits i
      JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
      WHERE p.relname IN ('visits', 'page_views') ORDER BY c.relname`;
    return rows.map((row) => row.name);
  }

  /** The tables of months, partitions or not. */
  async function monthTables(): Promise<string[]> {
    const rows = await t.prisma.$queryRaw<{ name: string }[]>`
      SELECT relname AS name FROM pg_class
      WHERE relkind = 'r' AND relname ~ '^(visits|page_views)_[0-9]{4}_[0-9]{2}$' ORDER BY relname`;
    return rows.map((row) => row.name);
  }

  /** Stored rows (whatever the retention): the visits' ids, and their page views' count. */
  async function storedVisits(workspaceId: string) {
    const visits = await t.prisma.$queryRaw<{ id: string }[]>`
      SELECT id FROM visits WHERE workspace_id = ${workspaceId} ORDER BY id`;
    const [{ n }] = await t.prisma.$queryRaw<{ n: number }[]>`
      SELECT count(*)::int AS n FROM page_views WHERE workspace_id = ${workspaceId}`;
    return { visits: visits.map((row) => row.id), pageViews: n };
  }

  describe('prune-visits', () => {
    // One workspace: `older` and `old`, in two months wholly past the retention; `edge`, past the
    // retention in the month the retention starts in; `recent`. Imported under a longer retention
    // (the import makes the old months' partitions), then pruned with the default one.
    let workspaceId: string;
    let companyId: string;
    let key: string;
    const visits: Record<'older' | 'old' | 'edge' | 'recent', VisitLine> = {} as never;
    let before: number;
    let expectedDrop: string[];
    let tablesBefore: string[];
    let output: unknown;

    beforeAll(async () => {
      const tenant = await createTenant(t.prisma);
      workspaceId = tenant.workspace.id;
      key = tenant.key;
      const company = await createCompany(t.prisma, workspaceId);
      companyId = company.id;
      before = Date.now() - RETENTION_DAYS * DAY_MS;
      visits.older = visitLine(company.id, { startedAt: plus(monthStart(before, -2), 3_600_000) });
      visits.old = visitLine(company.id, { startedAt: plus(monthStart(before), -3_600_000) });
      visits.edge = visitLine(company.id, { startedAt: monthStart(before) });
      visits.recent = visitLine(company.id, { startedAt: daysAgo(2) });
      for (const line of Object.values(visits))
        line.pages = [{ ...line.pages[0], viewedAt: line.startedAt }];
      // A path seen only in the months dropped, and one seen last in them (a page view of a
      // visit that started in the month before) but also kept.
      visits.older.pages[0].path = '/gone';
      visits.old.pages[0] = { ...visits.old.pages[0], path: '/kept' };
      visits.old.pages[0].viewedAt = plus(monthStart(before), 3_600_000);
      visits.old.endedAt = plus(monthStart(before), 5_400_000);
      visits.edge.pages[0].path = '/kept';
      expectedDrop = [monthOf(visits.older.startedAt), monthOf(visits.old.startedAt)];
      await importVisits(workspaceId, Object.values(visits), { VISIT_RETENTION_DAYS: '800' });
      tablesBefore = await monthTables();

      output = await cliJson('prune-visits');
    });

    it('the import made the partitions of months it had none for', () => {
      for (const month of expectedDrop) {
        expect(tablesBefore).toEqual(
          expect.arrayContaining([partition('visits', month), partition('page_views', month)]),
        );
      }
    });

    it('prints the months dropped and where the retention starts', () => {
      expect(output).toStrictEqual({
        olderThanDays: RETENTION_DAYS,
        before: expect.any(String),
        dropped: expectedDrop,
        made: 0,
        changes: 3,
      });
      const printed = Date.parse((output as { before: string }).before);
      expect(Math.abs(printed - before)).toBeLessThan(60_000);
    });

    it('drops the months wholly past the retention, their tables gone', async () => {
      const tables = await monthTables();
      for (const month of expectedDrop) {
        expect(tables).not.toContain(partition('visits', month));
        expect(tables).not.toContain(partition('page_views', month));
      }
      expect(tables).toEqual(
        tablesBefore.filter(
          (name) => !expectedDrop.some((month) => name.endsWith(month.replace('-', '_'))),
        ),
      );
    });

    it('keeps the month the retention starts in, and the rest, with their page views', async () => {
      await expect(storedVisits(workspaceId)).resolves.toStrictEqual({
        visits: [visits.edge.id, visits.recent.id].sort(),
        pageViews: 2,
      });
      const partitionNames = await partitions();
      expect(partitionNames).toEqual(
        expect.arrayContaining([
          partition('visits', monthOf(visits.edge.startedAt)),
          partition('page_views', monthOf(visits.edge.startedAt)),
        ]),
      );
    });

    it('reads only the visits within the retention, the stored one past it included', async () => {
      const list = await getWithKey(t.app, '/v1/visits', key);
      expect(list.status).toBe(200);
      expect((list.body.data as { id: string }[]).map((visit) => visit.id)).toEqual([
        visits.recent.id,
      ]);
      expect((await getWithKey(t.app, `/v1/visits/${visits.edge.id}`, key)).status).toBe(404);
    });

    it('leaves visited_paths as the page views kept make it', async () => {
      const truth = await t.prisma.$queryRaw`
        SELECT company_id, path, max(viewed_at) AS last FROM page_views
        WHERE workspace_id = ${workspaceId} GROUP BY company_id, path ORDER BY path`;
      const kept = await t.prisma.$queryRaw`
        SELECT company_id, path, last_viewed_at AS last FROM visited_paths
        WHERE workspace_id = ${workspaceId} ORDER BY path`;
      expect(kept).toStrictEqual(truth);
      expect(kept).toStrictEqual([
        { company_id: companyId, path: '/', last: new Date(visits.recent.startedAt) },
        { company_id: companyId, path: '/kept', last: new Date(visits.edge.startedAt) },
      ]);
    });

    it('removes the feed rows of the visits past the retention', async () => {
      await expect(
        t.prisma.$queryRaw`SELECT id FROM visit_changes WHERE workspace_id = ${workspaceId}`,
      ).resolves.toEqual([{ id: visits.recent.id }]);
    });

    it('makes the partitions of this month and the next two', async () => {
      const names = await partitions();
      for (const months of [0, 1, 2]) {
        const month = monthOf(monthStart(Date.now(), months));
        expect(names).toEqual(
          expect.arrayContaining([partition('visits', month), partition('page_views', month)]),
        );
      }
    });

    it('does nothing when run again', async () => {
      const names = await partitions();
      const run = await cli('prune-visits');

      expect(run).toMatchObject({ status: 0, stderr: '' });
      expect(run.stdout).toMatch(
        /^Dropped 0 months of visits older than 395 days \(before \d{4}-\d\d-\d\dT[\d:.]+Z\); made 0 months\.\n$/,
      );
      await expect(partitions()).resolves.toEqual(names);
      await expect(storedVisits(workspaceId)).resolves.toMatchObject({ pageViews: 2 });
    });

    it('makes a month ahead that is missing, and says it made it', async () => {
      const month = monthOf(monthStart(Date.now(), 2));
      await t.prisma.$executeRawUnsafe(`DROP TABLE ${partition('page_views', month)}`);
      await t.prisma.$executeRawUnsafe(`DROP TABLE ${partition('visits', month)}`);
      const without = await partitions();
      expect(without).not.toContain(partition('visits', month));

      await expect(cliJson('prune-visits')).resolves.toMatchObject({ dropped: [], made: 1 });

      await expect(partitions()).resolves.toEqual(
        [...without, partition('visits', month), partition('page_views', month)].sort(),
      );
      // The month made is the month's UTC range, in both tables.
      const bounds = await t.prisma.$transaction(async (tx) => {
        await tx.$executeRaw`SET LOCAL TimeZone = 'UTC'`;
        return tx.$queryRaw<{ name: string; bound: string }[]>`
          SELECT relname AS name, pg_get_expr(relpartbound, oid) AS bound FROM pg_class
          WHERE relname IN (${partition('visits', month)}, ${partition('page_views', month)})
          ORDER BY relname`;
      });
      const range =
        `FOR VALUES FROM ('${month}-01 00:00:00+00') ` +
        `TO ('${monthStart(`${month}-01T00:00:00Z`, 1).slice(0, 10)} 00:00:00+00')`;
      expect(bounds).toEqual([
        { name: partition('page_views', month), bound: range },
        { name: partition('visits', month), bound: range },
      ]);
    });
  });

  describe('delete', () => {
    async function tenantWithVisits() {
      const { workspace } = await createTenant(t.prisma);
      const doomed = await createCompany(t.prisma, workspace.id);
      const kept = await createCompany(t.prisma, workspace.id);
      const lines = {
        doomed: [visitLine(doomed.id), visitLine(doomed.id, { startedAt: daysAgo(60) })],
        kept: [visitLine(kept.id), visitLine(kept.id)],
      };
      await importVisits(workspace.id, [...lines.doomed, ...lines.kept]);
      return { workspaceId: workspace.id, doomed, kept, lines };
    }

    it("deletes a company's visits with it, their page views too, and counts them", async () => {
      const { workspaceId, doomed, lines } = await tenantWithVisits();

      const output = await cliJson('delete', '--workspace', workspaceId, '--companies', doomed.id);

      expect(output).toStrictEqual({
        workspaceId,
        companies: 1,
        contacts: 0,
        leads: { listed: 0, ofDeletedCompanies: 0, total: 0 },
        visits: { listed: 0, ofDeletedCompanies: 2, total: 2 },
      });
      await expect(storedVisits(workspaceId)).resolves.toStrictEqual({
        visits: lines.kept.map((line) => line.id).sort(),
        pageViews: 4,
      });
    });

    it('deletes listed visits with their page views, a listed visit of a deleted company counted once', async () => {
      const { workspaceId, doomed, lines } = await tenantWithVisits();

      const output = await cliJson(
        'delete',
        '--workspace',
        workspaceId,
        '--companies',
        doomed.id,
        '--visits',
        `${lines.doomed[0].id},${lines.kept[0].id}`,
      );

      expect(output).toStrictEqual({
        workspaceId,
        companies: 1,
        contacts: 0,
        leads: { listed: 0, ofDeletedCompanies: 0, total: 0 },
        visits: { listed: 2, ofDeletedCompanies: 1, total: 3 },
      });
      await expect(storedVisits(workspaceId)).resolves.toStrictEqual({
        visits: [lines.kept[1].id],
        pageViews: 2,
      });
    });

    it('prints one line without --json', async () => {
      const { workspaceId, lines } = await tenantWithVisits();

      const run = await cli('delete', '--workspace', workspaceId, '--visits', lines.kept[1].id);

      expect(run).toStrictEqual({
        status: 0,
        stdout: `Deleted 1 listed visit from workspace ${workspaceId}: 0 leads and 1 visit in all.\n`,
        stderr: '',
      });
    });

    it('refuses the whole command when a visit is not of the workspace, naming it, and deletes nothing', async () => {
      const { workspaceId, doomed, lines } = await tenantWithVisits();
      const other = await tenantWithVisits();
      const theirs = other.lines.kept[0].id;
      const before = [await storedVisits(workspaceId), await storedVisits(other.workspaceId)];

      expectRefusal(
        await cli(
          'delete',
          '--workspace',
          workspaceId,
          '--companies',
          doomed.id,
          '--visits',
          `${lines.kept[0].id},vi_nowhere,${theirs}`,
        ),
        `delete refused, nothing was deleted: not in workspace ${workspaceId}: ` +
          `visits vi_nowhere, ${theirs}`,
      );

      await expect(
        Promise.all([storedVisits(workspaceId), storedVisits(other.workspaceId)]),
      ).resolves.toStrictEqual(before);
      await expect(t.prisma.company.count({ where: { id: doomed.id } })).resolves.toBe(1);
    });
  });

  it.each([
    [['--older-than-days', '0'], /--older-than-days must be a whole number of days from 1/],
    [['--older-than-days', 'month'], /--older-than-days must be a whole number of days/],
    [['--all'], /unknown option '--all'/],
  ])('prune-visits refuses %j', async (flags, message) => {
    expectRefusal(await cli('prune-visits', ...flags), message);
  });

  // Last: it drops months that the tests above read (jest runs a file's tests in order).
  it('prune-visits takes the retention from --older-than-days', async () => {
    const { workspace } = await createTenant(t.prisma);
    const company = await createCompany(t.prisma, workspace.id);
    const old = visitLine(company.id, { startedAt: daysAgo(150) });
    const recent = visitLine(company.id, { startedAt: fromNow(-DAY_MS) });
    await importVisits(workspace.id, [old, recent]);
    const cutoff = Date.now() - 100 * DAY_MS;
    // Every month whose partition ends by the cutoff goes, whatever the tests before made.
    const due = [
      ...new Set(
        (await partitions())
          .filter((name) => name.startsWith('visits_'))
          .map((name) => name.slice('visits_'.length).replace('_', '-'))
          .filter((month) => Date.parse(monthStart(`${month}-01T00:00:00Z`, 1)) <= cutoff),
      ),
    ].sort();
    expect(due).toContain(monthOf(old.startedAt));

    await expect(cliJson('prune-visits', '--older-than-days', '100')).resolves.toMatchObject({
      olderThanDays: 100,
      dropped: due,
      made: 0,
    });

    await expect(storedVisits(workspace.id)).resolves.toStrictEqual({
      visits: [recent.id],
      pageViews: 2,
    });
  });
});

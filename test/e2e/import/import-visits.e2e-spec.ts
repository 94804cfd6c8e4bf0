import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type AdminRun, runAdminCommand, runAdminCommandWithInput } from '../../support/admin';
import { createTestApp, type TestApp } from '../../support/app';
import { createCompany, createWorkspace } from '../../support/factories';
import { createTenant, getWithKey } from '../../support/http';
import {
  asReturned,
  daysAgo,
  fromNow,
  ndjson,
  pageRecord,
  plus,
  type VisitLine,
  visitLine,
} from '../../support/visit-records';

// `admin import-visits` (docs/admin.md, "Importing visits"): what goes in comes back out of the
// API with its derived fields, the counts printed are what changed, a second run changes nothing,
// and any bad line refuses the whole input with nothing written.

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

interface Counts {
  visits: { added: number; changed: number; unchanged: number };
  pageViews: { added: number; changed: number; unchanged: number; removed: number };
}

/** `text` as a regular expression that matches it literally. */
function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function counts(visits: number[], pageViews: number[]): Counts {
  const [added, changed, unchanged] = visits;
  const [pagesAdded, pagesChanged, pagesUnchanged, removed] = pageViews;
  return {
    visits: { added, changed, unchanged },
    pageViews: { added: pagesAdded, changed: pagesChanged, unchanged: pagesUnchanged, removed },
  };
}

describe('admin import-visits', () => {
  let t: TestApp;
  let directory: string;

  beforeAll(async () => {
    t = await createTestApp();
    directory = await mkdtemp(join(tmpdir(), 'admin-import-visits-'));
  }, 60_000);

  afterAll(async () => {
    await rm(directory, { recursive: true, force: true });
    await t.close();
  });

  function admin(env: Record<string, string>, ...argv: string[]): Promise<AdminRun> {
    return runAdminCommand({ DATABASE_URL: t.database.url, ...env }, ...argv);
  }

  let files = 0;
  async function fileWith(lines: (VisitLine | string)[]): Promise<string> {
    const path = join(directory, `visits-${++files}.ndjson`);
    await writeFile(path, ndjson(lines));
    return path;
  }

  /** `import-visits` of these lines from a file; `env` over the test's environment. */
  async function importRun(
    workspaceId: string,
    lines: (VisitLine | string)[],
    { json = true, env = {} }: { json?: boolean; env?: Record<string, string> } = {},
  ): Promise<AdminRun> {
    const file = await fileWith(lines);
    return admin(
      env,
      'import-visits',
      '--workspace',
      workspaceId,
      '--file',
      file,
      ...(json ? ['--json'] : []),
    );
  }

  /** `import-visits --json`: success, and stdout is exactly one JSON document. */
  async function importJson(workspaceId: string, lines: (VisitLine | string)[]): Promise<Counts> {
    const run = await importRun(workspaceId, lines);
    expect(run).toMatchObject({ stderr: '', status: 0 });
    return JSON.parse(run.stdout) as Counts;
  }

  /** A refused import: exit 1, nothing on stdout, and the lines of stderr after `error: `. */
  async function importRefused(
    workspaceId: string,
    lines: (VisitLine | string)[],
    env: Record<string, string> = {},
  ): Promise<string[]> {
    const run = await importRun(workspaceId, lines, { env });
    expect(run).toMatchObject({ status: 1, stdout: '' });
    expect(run.stderr).toMatch(/^error: import refused, nothing was written: /);
    return run.stderr.trimEnd().split('\n');
  }

  /**
   * Everything the import writes for the workspace, rows with their writing transaction (xmin):
   * the visits, their page views and their change records. Equal before and after means nothing
   * was written, not even a row rewritten with the same values.
   */
  async function stored(workspaceId: string): Promise<unknown> {
    return {
      visits: await t.prisma.$queryRaw`
        SELECT v.*, v.xmin::text AS xmin FROM visits v
        WHERE workspace_id = ${workspaceId} ORDER BY id`,
      pageViews: await t.prisma.$queryRaw`
        SELECT p.*, p.xmin::text AS xmin FROM page_views p
        WHERE workspace_id = ${workspaceId} ORDER BY visit_id, position`,
      changes: await t.prisma.$queryRaw`
        SELECT id, txid::text AS txid, changed_at, deleted, started_at, xmin::text AS xmin
        FROM visit_changes
        WHERE workspace_id = ${workspaceId} ORDER BY id`,
    };
  }

  const nothingStored = { visits: [], pageViews: [], changes: [] };

  /** The workspace's visits through GET /v1/visits, newest first. */
  async function listed(key: string): Promise<unknown[]> {
    const response = await getWithKey(t.app, '/v1/visits?limit=200', key);
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ hasMore: false, nextCursor: null });
    return response.body.data as unknown[];
  }

  /** A workspace with a key and one company, for the visits of a test. */
  async function tenantWithCompany() {
    const { workspace, key } = await createTenant(t.prisma);
    const company = await createCompany(t.prisma, workspace.id);
    return { workspaceId: workspace.id, key, companyId: company.id };
  }

  describe('a good file', () => {
    it('imports visits with their page views, read back through the API with their derived fields', async () => {
      const { workspaceId, key, companyId } = await tenantWithCompany();
      const second = await createCompany(t.prisma, workspaceId);
      const startedAt = daysAgo(3);
      // Pages out of viewedAt order, two of them at the same instant: stored in viewedAt order,
      // ties in the line's order.
      const wide = visitLine(companyId, {
        startedAt,
        endedAt: plus(startedAt, 754_567),
        pages: [
          pageRecord(startedAt, 120, { path: '/demo', title: null, secondsOnPage: null }),
          pageRecord(startedAt, 0, { path: '/blog/caf%C3%A9', title: 'Café ☕' }),
          pageRecord(startedAt, 60, { path: '/pricing', hostname: 'app.example.com' }),
          pageRecord(startedAt, 60, { path: '/Pricing/', secondsOnPage: 0 }),
        ],
      });
      const bare = visitLine(second.id, {
        startedAt: daysAgo(1),
        referrer: null,
        source: null,
        medium: null,
        campaign: null,
        deviceType: 'tablet',
        country: null,
      });
      bare.endedAt = bare.startedAt;
      bare.pages = [pageRecord(bare.startedAt, 0, { title: null, secondsOnPage: null })];

      const output = await importJson(workspaceId, [wide, bare]);

      expect(output).toStrictEqual(counts([2, 0, 0], [5, 0, 0, 0]));
      const expected = [asReturned(bare), asReturned(wide)];
      await expect(listed(key)).resolves.toStrictEqual(expected);
      // Spelled out once, so that the expectation does not rest on the helper alone.
      expect(expected[1]).toMatchObject({
        durationSeconds: 754,
        pageViewCount: 4,
        landingPage: '/blog/caf%C3%A9',
      });
      expect(expected[1].pages.map((page) => page.path)).toEqual([
        '/blog/caf%C3%A9',
        '/pricing',
        '/Pricing/',
        '/demo',
      ]);
      const one = await getWithKey(t.app, `/v1/visits/${wide.id}`, key);
      expect(one.status).toBe(200);
      expect(one.body).toStrictEqual(asReturned(wide));
      await expect(
        t.prisma
          .$queryRaw`SELECT count(*)::int AS n FROM page_views WHERE workspace_id = ${workspaceId}`,
      ).resolves.toEqual([{ n: 5 }]);
    });

    it('prints the counts in one sentence without --json', async () => {
      const { workspaceId, companyId } = await tenantWithCompany();
      const line = visitLine(companyId);

      const first = await importRun(workspaceId, [line, visitLine(companyId)], { json: false });
      const again = await importRun(workspaceId, [{ ...line, pages: [line.pages[0]] }], {
        json: false,
      });

      expect(first).toStrictEqual({
        status: 0,
        stdout:
          `Imported 2 visits (2 added, 0 changed, 0 unchanged) and 4 page views (4 added, ` +
          `0 changed, 0 unchanged) into workspace ${workspaceId}.\n`,
        stderr: '',
      });
      expect(again).toStrictEqual({
        status: 0,
        stdout:
          `Imported 1 visit (0 added, 1 changed, 0 unchanged) and 1 page view (0 added, ` +
          `0 changed, 1 unchanged, 1 removed) into workspace ${workspaceId}.\n`,
        stderr: '',
      });
    });

    it('reads standard input with --file -, blank lines skipped', async () => {
      const { workspaceId, key, companyId } = await tenantWithCompany();
      const lines = [visitLine(companyId), visitLine(companyId, { startedAt: daysAgo(5) })];
      const input = `\n${JSON.stringify(lines[0])}\n   \n${JSON.stringify(lines[1])}`;

      const run = await runAdminCommandWithInput(
        { DATABASE_URL: t.database.url },
        input,
        'import-visits',
        '--workspace',
        workspaceId,
        '--file',
        '-',
        '--json',
      );

      expect(run).toMatchObject({ status: 0, stderr: '' });
      expect(JSON.parse(run.stdout)).toStrictEqual(counts([2, 0, 0], [4, 0, 0, 0]));
      await expect(listed(key)).resolves.toStrictEqual(lines.map(asReturned));
    });

    it('changes nothing when the same file is imported again', async () => {
      const { workspaceId, key, companyId } = await tenantWithCompany();
      const lines = [visitLine(companyId), visitLine(companyId, { startedAt: daysAgo(40) })];
      await importJson(workspaceId, lines);
      const before = await stored(workspaceId);
      const read = await listed(key);

      const again = await importJson(workspaceId, lines);

      expect(again).toStrictEqual(counts([0, 0, 2], [0, 0, 4, 0]));
      await expect(stored(workspaceId)).resolves.toStrictEqual(before);
      await expect(listed(key)).resolves.toStrictEqual(read);
    });

    it('replaces a visit whole by id, pages included, and counts its pages added, changed, kept and removed', async () => {
      const { workspaceId, key, companyId } = await tenantWithCompany();
      const other = await createCompany(t.prisma, workspaceId);
      const startedAt = daysAgo(4);
      const replaced = visitLine(companyId, {
        startedAt,
        pages: [
          pageRecord(startedAt, 0, { path: '/' }),
          pageRecord(startedAt, 10, { path: '/a' }),
          pageRecord(startedAt, 20, { path: '/b' }),
        ],
      });
      const grows = visitLine(companyId);
      const kept = visitLine(companyId);
      await importJson(workspaceId, [replaced, grows, kept]);

      const fewer: VisitLine = {
        ...replaced,
        companyId: other.id,
        campaign: 'winter',
        pages: [replaced.pages[0], { ...replaced.pages[1], title: 'Renamed' }],
      };
      const more: VisitLine = {
        ...grows,
        pages: [...grows.pages, pageRecord(grows.startedAt, 90, { path: '/demo' })],
      };
      const added = visitLine(companyId);
      const output = await importJson(workspaceId, [fewer, more, kept, added]);

      // Pages: `added`'s 2 and `more`'s third added; `fewer`'s second changed; `fewer`'s first,
      // `more`'s first two and `kept`'s 2 unchanged; `fewer`'s third removed.
      expect(output).toStrictEqual(counts([1, 2, 1], [3, 1, 5, 1]));
      await expect(listed(key)).resolves.toStrictEqual(
        [fewer, more, kept, added]
          .map(asReturned)
          .sort((a, b) => b.startedAt.localeCompare(a.startedAt) || b.id.localeCompare(a.id)),
      );
      await expect(
        t.prisma
          .$queryRaw`SELECT count(*)::int AS n FROM page_views WHERE workspace_id = ${workspaceId}`,
      ).resolves.toEqual([{ n: 2 + 3 + 2 + 2 }]);
    });

    it('moves a visit whose startedAt moves to another month: one visit, its pages with it', async () => {
      const { workspaceId, key, companyId } = await tenantWithCompany();
      const line = visitLine(companyId, { startedAt: daysAgo(2) });
      await importJson(workspaceId, [line]);
      const earlier = visitLine(companyId, { id: line.id, startedAt: daysAgo(70) });

      await expect(importJson(workspaceId, [earlier])).resolves.toStrictEqual(
        counts([0, 1, 0], [0, 2, 0, 0]),
      );

      await expect(listed(key)).resolves.toStrictEqual([asReturned(earlier)]);
      await expect(
        t.prisma.$queryRaw`SELECT visit_started_at AS "startedAt" FROM page_views
          WHERE workspace_id = ${workspaceId} ORDER BY position`,
      ).resolves.toEqual(earlier.pages.map(() => ({ startedAt: new Date(earlier.startedAt) })));
    });

    it('imports docs/examples/visits.ndjson into the example workspace, as docs/admin.md shows', async () => {
      const root = join(__dirname, '../../..');
      const example = join(root, 'docs/examples/visits.ndjson');
      const lines = (await readFile(example, 'utf8'))
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as VisitLine);
      const run = (...argv: string[]) => admin({}, ...argv, '--json');

      expect(
        await run('workspace', 'create', '--name', 'Acme', '--plan', 'growth', '--id', 'ws_acme'),
      ).toMatchObject({ status: 0 });
      expect(
        await run(
          'import',
          '--workspace',
          'ws_acme',
          '--file',
          join(root, 'docs/examples/import.json'),
        ),
      ).toMatchObject({ status: 0 });
      const imported = await run('import-visits', '--workspace', 'ws_acme', '--file', example);

      // Its dates are fixed: past the retention (VISIT_RETENTION_DAYS), the example needs new ones.
      expect(imported).toMatchObject({ status: 0, stderr: '' });
      const pages = lines.reduce((sum, line) => sum + line.pages.length, 0);
      expect(JSON.parse(imported.stdout)).toStrictEqual(
        counts([lines.length, 0, 0], [pages, 0, 0, 0]),
      );
      expect(lines.length).toBeGreaterThan(1);
      const { key } = JSON.parse(
        (await run('key', 'create', '--workspace', 'ws_acme', '--name', 'Example')).stdout,
      ) as { key: string };
      await expect(listed(key)).resolves.toStrictEqual(
        lines
          .map(asReturned)
          .sort((a, b) => b.startedAt.localeCompare(a.startedAt) || b.id.localeCompare(a.id)),
      );
    });
  });

  describe('a bad line refuses the whole input, nothing written', () => {
    /** A workspace whose line 1 is a good visit, for line 2 to break a rule. */
    async function refusedWith(
      bad: (companyId: string) => VisitLine | string,
      env: Record<string, string> = {},
    ): Promise<{ lines: string[]; id: string | undefined }> {
      const { workspaceId, companyId } = await tenantWithCompany();
      const line = bad(companyId);
      const lines = await importRefused(workspaceId, [visitLine(companyId), line], env);
      await expect(stored(workspaceId)).resolves.toStrictEqual(nothingStored);
      return { lines, id: typeof line === 'string' ? undefined : line.id };
    }

    /** The refusal of one bad line, line 2, named with its id: this message (or pattern). */
    async function expectRefused(
      bad: (companyId: string) => VisitLine | string,
      message: string | ((line: VisitLine) => string | RegExp),
      env: Record<string, string> = {},
    ): Promise<void> {
      let badLine: VisitLine | undefined;
      const { lines, id } = await refusedWith((companyId) => {
        const line = bad(companyId);
        if (typeof line !== 'string') badLine = line;
        return line;
      }, env);
      const expected = typeof message === 'string' ? message : message(badLine as VisitLine);
      const named = `  line 2 (${id === undefined ? 'no valid id' : `id ${id}`}): `;
      expect(lines).toEqual([
        'error: import refused, nothing was written: 1 line is invalid',
        typeof expected === 'string'
          ? named + expected
          : expect.stringMatching(new RegExp(`^${escape(named)}${expected.source}`)),
      ]);
    }

    it('malformed JSON', async () => {
      const { lines } = await refusedWith(() => '{"id": "vi_broken", "companyId": ');
      expect(lines).toEqual([
        'error: import refused, nothing was written: 1 line is invalid',
        expect.stringMatching(/^ {2}line 2 \(no valid id\): not valid JSON: .+/),
      ]);
    });

    it('a line that is not an object', () =>
      expectRefused(() => '[1, 2]', 'must be a JSON object (one visit)'));

    it('a missing field', () =>
      expectRefused((companyId) => {
        const line: Partial<VisitLine> = visitLine(companyId);
        delete line.referrer;
        return line as VisitLine;
      }, 'referrer is required (null when unknown)'));

    it('a missing field of a page', () =>
      expectRefused((companyId) => {
        const line = visitLine(companyId);
        delete (line.pages[1] as Partial<VisitLine['pages'][number]>).title;
        return line;
      }, 'pages[1]: title is required (null when unknown)'));

    it('an extra field', () =>
      expectRefused(
        (companyId) => ({ ...visitLine(companyId), utm: 'x' }) as VisitLine,
        'utm is not a field of this record',
      ));

    it('a derived field', () =>
      expectRefused(
        (companyId) => ({ ...visitLine(companyId), pageViewCount: 2 }) as VisitLine,
        'pageViewCount is derived by the import from the other fields: leave it out',
      ));

    it.each(['/pricing?utm_source=x', '/pricing#plans', 'pricing'])('a path %j', (path) =>
      expectRefused((companyId) => {
        const line = visitLine(companyId);
        line.pages[1].path = path;
        return line;
      }, `pages[1]: path must start with / and hold no ? or #`),
    );

    it.each([
      ['before startedAt', -1],
      ['after endedAt', 600_001],
    ])('a page view %s', (_name, offsetMs) =>
      expectRefused((companyId) => {
        const line = visitLine(companyId);
        line.pages[1].viewedAt = plus(line.startedAt, offsetMs);
        return line;
      }, 'pages[1]: viewedAt must be within the visit (from startedAt to endedAt)'),
    );

    it('more than 500 pages', () =>
      expectRefused((companyId) => {
        const line = visitLine(companyId);
        line.pages = Array.from({ length: 501 }, (_, i) =>
          pageRecord(line.startedAt, i, { path: `/p/${i}` }),
        );
        line.endedAt = plus(line.startedAt, 600_000);
        return line;
      }, 'pages must hold at most 500 page views (it holds 501)'));

    it('no page', () =>
      expectRefused(
        (companyId) => ({ ...visitLine(companyId), pages: [] }),
        'pages must hold at least one page view',
      ));

    it('an unknown company', () =>
      expectRefused(
        () => visitLine('co_nowhere'),
        () => /companyId co_nowhere is not a company of workspace ws_\d+$/,
      ));

    it('a company of another workspace', async () => {
      const other = await createWorkspace(t.prisma);
      const theirs = await createCompany(t.prisma, other.id);
      const { workspaceId, companyId } = await tenantWithCompany();
      const lines = await importRefused(workspaceId, [
        visitLine(companyId),
        visitLine(theirs.id, { id: 'vi_to_theirs' }),
      ]);
      expect(lines).toEqual([
        'error: import refused, nothing was written: 1 line is invalid',
        `  line 2 (id vi_to_theirs): companyId ${theirs.id} is not a company of workspace ${workspaceId}`,
      ]);
      await expect(stored(workspaceId)).resolves.toStrictEqual(nothingStored);
      await expect(stored(other.id)).resolves.toStrictEqual(nothingStored);
    });

    it("the id of another workspace's visit, which stays as it was", async () => {
      const theirs = await tenantWithCompany();
      const their = visitLine(theirs.companyId);
      await importJson(theirs.workspaceId, [their]);
      const before = await stored(theirs.workspaceId);
      const { workspaceId, companyId } = await tenantWithCompany();

      const lines = await importRefused(workspaceId, [
        visitLine(companyId),
        visitLine(companyId, { id: their.id }),
      ]);

      expect(lines).toEqual([
        'error: import refused, nothing was written: 1 line is invalid',
        `  line 2 (id ${their.id}): id ${their.id} belongs to another workspace`,
      ]);
      await expect(stored(workspaceId)).resolves.toStrictEqual(nothingStored);
      await expect(stored(theirs.workspaceId)).resolves.toStrictEqual(before);
    });

    it('an id used by an earlier line', async () => {
      const { workspaceId, companyId } = await tenantWithCompany();
      const first = visitLine(companyId);
      const lines = await importRefused(workspaceId, [
        first,
        visitLine(companyId),
        visitLine(companyId, { id: first.id, startedAt: daysAgo(9) }),
      ]);
      expect(lines).toEqual([
        'error: import refused, nothing was written: 1 line is invalid',
        `  line 3 (id ${first.id}): id ${first.id} is already used by line 1`,
      ]);
      await expect(stored(workspaceId)).resolves.toStrictEqual(nothingStored);
    });

    it('a startedAt in the future (beyond 5 minutes)', () =>
      expectRefused(
        (companyId) => visitLine(companyId, { startedAt: fromNow(10 * 60_000) }),
        (line) => `startedAt ${line.startedAt} is in the future (beyond 5 minutes)`,
      ));

    it('a startedAt past the retention (VISIT_RETENTION_DAYS, 395 days by default)', () =>
      expectRefused(
        (companyId) => visitLine(companyId, { startedAt: daysAgo(396) }),
        (line) =>
          new RegExp(
            `startedAt ${escape(line.startedAt)} is older than the retention \\(395 days, from .+Z\\)$`,
          ),
      ));

    it('a startedAt past a retention set by VISIT_RETENTION_DAYS', () =>
      expectRefused(
        (companyId) => visitLine(companyId, { startedAt: daysAgo(31) }),
        (line) =>
          new RegExp(
            `startedAt ${escape(line.startedAt)} is older than the retention \\(30 days, `,
          ),
        { VISIT_RETENTION_DAYS: '30' },
      ));

    it('a visit over 24 hours', () =>
      expectRefused((companyId) => {
        const line = visitLine(companyId, { startedAt: daysAgo(3) });
        line.endedAt = plus(line.startedAt, DAY_MS + 1);
        return line;
      }, 'endedAt must be at most 24 hours after startedAt'));

    it('an endedAt before startedAt', () =>
      expectRefused((companyId) => {
        const line = visitLine(companyId);
        line.endedAt = plus(line.startedAt, -1);
        line.pages = [pageRecord(line.startedAt, 0)];
        return line;
      }, 'endedAt must not be before startedAt; pages[0]: viewedAt must be within the visit (from startedAt to endedAt)'));

    it('names each bad line, in line order, whatever finds it', async () => {
      const { workspaceId, companyId } = await tenantWithCompany();
      const good = visitLine(companyId);
      const pathed = visitLine(companyId);
      pathed.pages[0].path = '/?q=1';
      const elsewhere = visitLine('co_nowhere');
      const lines = await importRefused(workspaceId, [
        good,
        '',
        pathed,
        'not json',
        elsewhere,
        visitLine(companyId, { id: good.id }),
        visitLine(companyId, { startedAt: fromNow(DAY_MS), deviceType: 'watch' as 'other' }),
      ]);
      expect(lines).toEqual([
        'error: import refused, nothing was written: 5 lines are invalid',
        `  line 3 (id ${pathed.id}): pages[0]: path must start with / and hold no ? or #`,
        expect.stringMatching(/^ {2}line 4 \(no valid id\): not valid JSON: /),
        `  line 5 (id ${elsewhere.id}): companyId co_nowhere is not a company of workspace ${workspaceId}`,
        `  line 6 (id ${good.id}): id ${good.id} is already used by line 1`,
        expect.stringMatching(
          /^ {2}line 7 \(id vi_\d+\): deviceType .+; startedAt .+ is in the future \(beyond 5 minutes\)$/,
        ),
      ]);
      await expect(stored(workspaceId)).resolves.toStrictEqual(nothingStored);
    });

    it('names the first 100 bad lines and counts the others', async () => {
      const { workspaceId, companyId } = await tenantWithCompany();
      const bad = Array.from({ length: 103 }, () => visitLine(companyId, { country: 'fr' }));

      const lines = await importRefused(workspaceId, [visitLine(companyId), ...bad]);

      expect(lines).toHaveLength(1 + 100 + 1);
      expect(lines[0]).toBe('error: import refused, nothing was written: 103 lines are invalid');
      expect(lines[1]).toMatch(/^ {2}line 2 \(id vi_\d+\): country must be two upper-case/);
      expect(lines[100]).toMatch(/^ {2}line 101 /);
      expect(lines[101]).toBe('  and 3 more invalid lines');
      await expect(stored(workspaceId)).resolves.toStrictEqual(nothingStored);
    });

    it("leaves a workspace's visits as they were", async () => {
      const { workspaceId, companyId } = await tenantWithCompany();
      const line = visitLine(companyId);
      await importJson(workspaceId, [line]);
      const before = await stored(workspaceId);

      await importRefused(workspaceId, [
        { ...line, campaign: 'changed' },
        visitLine(companyId),
        visitLine(companyId, { startedAt: daysAgo(400) }),
      ]);

      await expect(stored(workspaceId)).resolves.toStrictEqual(before);
    });
  });

  it.each([
    [['--file', '/nonexistent/visits.ndjson'], /--file \/nonexistent\/visits.ndjson: no such file/],
    [['--workspace', 'ws_missing'], /workspace ws_missing does not exist/],
  ])('refuses %j with one line', async (flags, message) => {
    const { workspaceId, companyId } = await tenantWithCompany();
    const file = await fileWith([visitLine(companyId)]);
    const argv = ['import-visits', '--workspace', workspaceId, '--file', file];
    const run = await admin({}, ...argv, ...flags);
    expect(run).toMatchObject({ status: 1, stdout: '' });
    expect(run.stderr.trimEnd().split('\n')).toEqual([expect.stringMatching(message)]);
    await expect(stored(workspaceId)).resolves.toStrictEqual(nothingStored);
  });
});

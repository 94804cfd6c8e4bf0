import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '../../../src/generated/prisma/client';
import { adminOn } from '../../support/admin';
import { createTestApp, type TestApp } from '../../support/app';
import { partsOf, readStream, type StreamLine } from '../../support/change-stream';
import { createTestDatabase } from '../../support/database';
import { createCompany, createWorkspace } from '../../support/factories';
import {
  createTenant,
  expectErrorEnvelope,
  expectValidationError,
  getWithKey,
  ISO_UTC_MILLIS,
} from '../../support/http';
import { listenOnLoopback } from '../../support/raw-http';
import { until } from '../../support/until';
import {
  asReturned,
  daysAgo,
  importVisitLines,
  pageRecord,
  type VisitLine,
  visitLine,
} from '../../support/visit-records';

// The visits' change feed (docs/changes.md, "The visits' feed"): GET /v1/visits/changes and its
// stream, fed by `admin import-visits` and `admin delete`: a visit once per state, its deletion
// (its own or its company's) a `delete`, the feed's own cursors, the 410 after pruned deletions,
// and tracking at one row per visit whatever its page views.

interface Change {
  op: 'upsert' | 'delete';
  id: string;
  changedAt: string;
  visit?: Record<string, unknown>;
}

const EXPIRED = 'cursor has expired: start again without a cursor';
// How long a read of the feed waits for this database's other transactions to end (see readFeed).
const FEED_WAIT_MS = 20_000;

const byId = <T extends { id: string }>(items: T[]): T[] =>
  [...items].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));

/** A change as the feed writes an upsert: the visit as the API returns it. */
const upsert = (line: VisitLine) => ({
  op: 'upsert',
  id: line.id,
  changedAt: expect.stringMatching(ISO_UTC_MILLIS),
  visit: asReturned(line),
});
const deletion = (id: string) => ({
  op: 'delete',
  id,
  changedAt: expect.stringMatching(ISO_UTC_MILLIS),
});

describe('the visits’ change feed', () => {
  let t: TestApp;
  let port: number;
  const { cliJson } = adminOn(() => t);

  beforeAll(async () => {
    t = await createTestApp();
    port = await listenOnLoopback(t.app);
  }, 60_000);

  afterAll(async () => {
    await t.close();
  });

  const feedPath = (feed: string, cursor?: string, query = '') =>
    `/v1/${feed}/changes?limit=1000${cursor === undefined ? '' : `&cursor=${encodeURIComponent(cursor)}`}${query}`;

  /**
   * Follows a feed's pages from `cursor` (the start without one) until `hasMore` is false: every
   * change read and the last `nextCursor`. A transaction still open elsewhere on the server holds
   * the feed back (an empty page with `hasMore`): then it waits a little and asks again, as a
   * client does, for up to FEED_WAIT_MS.
   */
  async function readFeed(
    key: string,
    cursor?: string,
    { feed = 'visits', query = '' }: { feed?: string; query?: string } = {},
  ): Promise<{ changes: Change[]; cursor: string }> {
    const changes: Change[] = [];
    const readOn = async () => {
      for (;;) {
        t.clock.advance(1_000); // a fresh rate-limit window every 60 requests
        const response = await getWithKey(t.app, feedPath(feed, cursor, query), key);
        expect(response.status).toBe(200);
        const page = response.body as { data: Change[]; nextCursor: string; hasMore: boolean };
        changes.push(...page.data);
        cursor = page.nextCursor;
        if (!page.hasMore) return { changes, cursor };
        if (page.data.length === 0) return undefined;
      }
    };
    return until('the visits feed to be held back no more', readOn, {
      withinMs: FEED_WAIT_MS,
      everyMs: 100,
    });
  }

  /** `import-visits` of these lines from standard input; its counts. */
  const importVisits = (workspaceId: string, lines: VisitLine[], databaseUrl = t.database.url) =>
    importVisitLines(databaseUrl, workspaceId, lines);

  async function tenantWithCompany() {
    const { workspace, key } = await createTenant(t.prisma);
    const company = await createCompany(t.prisma, workspace.id);
    return { workspaceId: workspace.id, key, companyId: company.id };
  }

  it('an imported visit appears once, as the API returns it, pages included', async () => {
    const { workspaceId, key, companyId } = await tenantWithCompany();
    const start = await readFeed(key);
    expect(start.changes).toEqual([]);
    const lines = [visitLine(companyId), visitLine(companyId, { startedAt: daysAgo(50) })];

    await importVisits(workspaceId, lines);

    const after = await readFeed(key, start.cursor);
    expect(byId(after.changes)).toStrictEqual(byId(lines).map(upsert));
    await expect(readFeed(key)).resolves.toMatchObject({
      changes: byId(lines).map(upsert),
    });
  });

  it('a re-import of the same state adds no change; a visit changed, or one of its pages, appears again', async () => {
    const { workspaceId, key, companyId } = await tenantWithCompany();
    const [kept, changed, paged] = [1, 2, 3].map(() => visitLine(companyId));
    await importVisits(workspaceId, [kept, changed, paged]);
    const { cursor } = await readFeed(key);

    await importVisits(workspaceId, [kept, changed, paged]);
    const again = await readFeed(key, cursor);
    expect(again.changes).toEqual([]);

    const newer = { ...changed, medium: 'social' };
    const repaged = { ...paged, pages: [paged.pages[0], { ...paged.pages[1], title: 'New' }] };
    await importVisits(workspaceId, [kept, newer, repaged]);
    const moved = await readFeed(key, again.cursor);
    expect(byId(moved.changes)).toStrictEqual(byId([newer, repaged]).map(upsert));
    // From the start, still each visit once, at its latest state.
    const whole = await readFeed(key);
    expect(byId(whole.changes)).toStrictEqual(byId([kept, newer, repaged]).map(upsert));
  });

  it("a deleted company's visits each get a delete, and so does a visit deleted by id", async () => {
    const { workspaceId, key, companyId } = await tenantWithCompany();
    const other = await createCompany(t.prisma, workspaceId);
    const doomed = [visitLine(companyId), visitLine(companyId, { startedAt: daysAgo(70) })];
    const listed = visitLine(other.id);
    const kept = visitLine(other.id);
    await importVisits(workspaceId, [...doomed, listed, kept]);
    const { cursor } = await readFeed(key);

    await cliJson('delete', '--workspace', workspaceId, '--companies', companyId);
    const afterCompany = await readFeed(key, cursor);
    expect(byId(afterCompany.changes)).toStrictEqual(byId(doomed).map((v) => deletion(v.id)));

    await cliJson('delete', '--workspace', workspaceId, '--visits', listed.id);
    const afterVisit = await readFeed(key, afterCompany.cursor);
    expect(afterVisit.changes).toStrictEqual([deletion(listed.id)]);

    // From the start: the live visit as an upsert, each deletion once.
    const whole = await readFeed(key);
    expect(byId(whole.changes)).toStrictEqual(
      byId([upsert(kept), deletion(listed.id), ...doomed.map((v) => deletion(v.id))] as {
        id: string;
      }[]),
    );
  });

  it('an id deleted and imported again appears as an upsert after its delete', async () => {
    const { workspaceId, key, companyId } = await tenantWithCompany();
    const line = visitLine(companyId);
    await importVisits(workspaceId, [line]);
    await cliJson('delete', '--workspace', workspaceId, '--visits', line.id);
    const { cursor } = await readFeed(key);

    await importVisits(workspaceId, [line]);

    await expect(readFeed(key, cursor)).resolves.toMatchObject({ changes: [upsert(line)] });
  });

  it('fields: each upsert with those fields only (and its id), deletes as they are', async () => {
    const { workspaceId, key, companyId } = await tenantWithCompany();
    const line = visitLine(companyId);
    const gone = visitLine(companyId);
    await importVisits(workspaceId, [line, gone]);
    await cliJson('delete', '--workspace', workspaceId, '--visits', gone.id);
    const query = '&fields=companyId,pageViewCount,pages.path';
    const expected = byId([
      {
        op: 'upsert',
        id: line.id,
        changedAt: expect.stringMatching(ISO_UTC_MILLIS),
        visit: {
          id: line.id,
          companyId,
          pageViewCount: 2,
          pages: line.pages.map((page) => ({ path: page.path })),
        },
      },
      deletion(gone.id),
    ] as { id: string }[]);

    const pages = await readFeed(key, undefined, { query });
    expect(byId(pages.changes)).toStrictEqual(expected);
    const stream = await readStream(
      port,
      `/v1/visits/changes/stream?fields=companyId,pageViewCount,pages.path`,
      key,
    );
    expect(stream.status).toBe(200);
    expect(byId(partsOf(stream.lines).changes as unknown as { id: string }[])).toStrictEqual(
      expected,
    );
  });

  it("400 for another feed's cursor, both ways, on the pages and the stream", async () => {
    const { workspaceId, key, companyId } = await tenantWithCompany();
    await importVisits(workspaceId, [visitLine(companyId)]);
    const visitsCursor = (await readFeed(key)).cursor;
    const companiesCursor = (await readFeed(key, undefined, { feed: 'companies' })).cursor;
    const leadsCursor = (await readFeed(key, undefined, { feed: 'leads' })).cursor;
    const refused = [
      `/v1/visits/changes?cursor=${encodeURIComponent(companiesCursor)}`,
      `/v1/visits/changes?cursor=${encodeURIComponent(leadsCursor)}`,
      `/v1/companies/changes?cursor=${encodeURIComponent(visitsCursor)}`,
      `/v1/leads/changes?cursor=${encodeURIComponent(visitsCursor)}`,
    ];
    for (const path of refused) {
      expect(expectValidationError(await getWithKey(t.app, path, key), path)).toEqual([
        'cursor is not valid',
      ]);
    }
    const streamPath = `/v1/visits/changes/stream?cursor=${encodeURIComponent(companiesCursor)}`;
    const stream = await readStream(port, streamPath, key);
    expect(stream.status).toBe(400);
    expect(stream.lines).toEqual([
      expect.objectContaining({ statusCode: 400, message: ['cursor is not valid'] }),
    ]);
  });

  describe('after an old deletion is pruned (admin prune-changes)', () => {
    // One workspace: `old` deleted 31 days ago, `recent` deleted now, `kept` live; cursors read
    // before and after the old deletion; then prune-changes with the default retention (30 days).
    let key: string;
    const visits: Record<'old' | 'recent' | 'kept', VisitLine> = {} as never;
    const cursors = { before: '', after: '' };
    let output: unknown;

    beforeAll(async () => {
      const tenant = await tenantWithCompany();
      key = tenant.key;
      visits.old = visitLine(tenant.companyId);
      visits.recent = visitLine(tenant.companyId);
      visits.kept = visitLine(tenant.companyId);
      await importVisits(tenant.workspaceId, Object.values(visits));
      cursors.before = (await readFeed(key)).cursor;
      await cliJson('delete', '--workspace', tenant.workspaceId, '--visits', visits.old.id);
      await t.prisma.$executeRaw`
        UPDATE visit_changes SET changed_at = now() - interval '31 days'
        WHERE id IN (${visits.old.id}, ${visits.kept.id})`;
      const after = await readFeed(key, cursors.before);
      expect(after.changes).toStrictEqual([deletion(visits.old.id)]);
      cursors.after = after.cursor;
      await cliJson('delete', '--workspace', tenant.workspaceId, '--visits', visits.recent.id);

      output = await cliJson('prune-changes');
    });

    it('prunes the visits’ old deletion record with the others', () => {
      expect(output).toMatchObject({ olderThanDays: 30, pruned: { visits: 1 } });
    });

    it('answers 410 GONE to a cursor read before the pruned deletion, on the pages and the stream', async () => {
      const path = `/v1/visits/changes?cursor=${encodeURIComponent(cursors.before)}`;
      expectErrorEnvelope(await getWithKey(t.app, path, key), {
        status: 410,
        error: 'GONE',
        path,
        message: EXPIRED,
      });
      const stream = await readStream(
        port,
        `/v1/visits/changes/stream?cursor=${encodeURIComponent(cursors.before)}`,
        key,
      );
      expect(stream.status).toBe(410);
      expect(stream.lines).toEqual([expect.objectContaining({ error: 'GONE', message: EXPIRED })]);
    });

    it('serves a cursor read after the pruned deletion, and a pass without a cursor', async () => {
      const after = await readFeed(key, cursors.after);
      expect(after.changes).toStrictEqual([deletion(visits.recent.id)]);
      const fromStart = await readFeed(key);
      expect(byId(fromStart.changes)).toStrictEqual(
        byId([upsert(visits.kept), deletion(visits.recent.id)] as { id: string }[]),
      );
    });
  });

  it('the stream sends the changes the pages do, in their order, and its cursor continues them', async () => {
    const { workspaceId, key, companyId } = await tenantWithCompany();
    const other = await createCompany(t.prisma, workspaceId);
    const lines = Array.from({ length: 150 }, (_, i) =>
      visitLine(i % 3 === 0 ? other.id : companyId, { startedAt: daysAgo(1 + (i % 40)) }),
    );
    await importVisits(workspaceId, lines.slice(0, 100));
    await importVisits(workspaceId, lines.slice(90));
    await cliJson('delete', '--workspace', workspaceId, '--companies', other.id);
    const pages = await readFeed(key);

    const read = await readStream(port, '/v1/visits/changes/stream', key);

    expect(read.status).toBe(200);
    expect(read.headers['content-type']).toBe('application/x-ndjson');
    const { changes, checkpoints, last } = partsOf(read.lines);
    expect(changes).toStrictEqual(pages.changes as unknown as StreamLine[]);
    expect(changes).toHaveLength(150);
    expect(last?.hasMore).toBe(false);
    // The first checkpoint comes after the first 100 changes; the pages go on from it.
    expect(read.lines.findIndex((line) => !('op' in line))).toBe(100);
    const rest = await readFeed(key, checkpoints[0]);
    expect(rest.changes).toStrictEqual(pages.changes.slice(100));
    const caughtUp = await readStream(
      port,
      `/v1/visits/changes/stream?cursor=${encodeURIComponent(last?.cursor ?? '')}`,
      key,
    );
    expect(partsOf(caughtUp.lines)).toEqual({
      changes: [],
      checkpoints: [],
      last: { cursor: expect.any(String), hasMore: false },
    });
  });

  it('the import writes one change row per visit, not one per page view', async () => {
    // A database of its own, imported into on a direct connection: its statistics then count the
    // import's writes alone, reported when the tool's session ends. (Through a pooler, the
    // server connections of this file's other tests stay open and report theirs when they like:
    // 188 of them once landed in the window.)
    const database = await createTestDatabase();
    const prisma = new PrismaClient({
      adapter: new PrismaPg({ connectionString: database.directUrl }),
    });
    try {
      const workspace = await createWorkspace(prisma);
      const company = await createCompany(prisma, workspace.id);
      const lines = Array.from({ length: 20 }, () => {
        const line = visitLine(company.id);
        line.pages = Array.from({ length: 25 }, (_, i) =>
          pageRecord(line.startedAt, i * 10, { path: `/p/${i}` }),
        );
        return line;
      });
      const writes = async () => {
        const [row] = await prisma.$queryRaw<{ n: number }[]>`
          SELECT (n_tup_ins + n_tup_upd + n_tup_del)::int AS n FROM pg_stat_user_tables
          WHERE relname = 'visit_changes'`;
        return row.n;
      };
      const writesBefore = await writes();

      await importVisits(workspace.id, lines, database.directUrl);

      await expect(
        prisma.$queryRaw`SELECT
          (SELECT count(*)::int FROM visit_changes WHERE workspace_id = ${workspace.id}) AS changes,
          (SELECT count(*)::int FROM page_views WHERE workspace_id = ${workspace.id}) AS "pageViews"`,
      ).resolves.toEqual([{ changes: 20, pageViews: 500 }]);
      const written = await until('the import’s writes to be reported', async () => {
        const n = (await writes()) - writesBefore;
        return n > 0 ? n : undefined;
      });
      expect(written).toBe(20);
    } finally {
      await prisma.$disconnect();
      await database.drop();
    }
  });
});

import type { PoolClient } from 'pg';
import { Pool } from 'pg';
import {
  COMPANY_CHANGE_STREAM_SQL,
  COMPANY_CHANGES_SQL,
  COMPANY_LIST,
} from '../../../src/companies/companies.sql';
import { sizedFeedSql } from '../../../src/changes/change-feed';
import { INLINE_BODY_BYTES } from '../../../src/items/body-budget';
import { LEAD_CHANGE_STREAM_SQL, LEAD_CHANGES_SQL, LEAD_LIST } from '../../../src/leads/leads.sql';
import { COMPANY_STATEMENTS } from '../../../src/companies/companies.sql';
import { COMPANY_SELECTABLE } from '../../../src/companies/company.fields';
import { parseFields, type Selection } from '../../../src/items/field-selection';
import { LEAD_STATEMENTS } from '../../../src/leads/leads.sql';
import { LEAD_SELECTABLE } from '../../../src/leads/lead.fields';
import { VISIT_STATEMENTS } from '../../../src/visits/visits.sql';
import { pathRange } from '../../../src/items/page-patterns';
import { createTestDatabase, type TestDatabase } from '../../support/database';

/*
 * The plan shapes the benchmark's numbers depend on, pinned on a workspace large enough for the
 * planner to choose as it does at scale (20,000 companies among 30,000, analyzed): a plan
 * regression fails here instead of waiting for the next `npm run bench`.
 * - Lists: a page's ids come from the covering order index alone (an index-only scan, so an
 *   offset skips index entries, never rows), and nothing sorts the workspace's rows.
 * - Feeds: a page is one range of the (workspace_id, txid, id) index, whatever its depth.
 * - Visits: a page is one backward range of the order index (or the company's) per month, the
 *   months outside the window are not read, and page views come from their indexes (the key, or
 *   the path index for page patterns), never by reading a month's page views. `visitedPage`
 *   reads visited_paths alone, by its indexes: the page views only for a window that starts
 *   within a day of the retention's start.
 * Plans are read with EXPLAIN (ANALYZE): actual row counts, not estimates, of the statements as
 * the server runs them (sized: items/body-budget.ts), without `fields` and with a selection.
 */

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  'Heap Fetches'?: number;
  'Index Cond'?: string;
  'Subplans Removed'?: number;
  Plans?: PlanNode[];
}

const WORKSPACE = 'ws_plans';

// A sync's selections (`fields`): a few top-level fields, and contacts by field.
const COMPANY_SELECTION = parseFields(
  COMPANY_SELECTABLE,
  'id,name,domain,intentScore,lastSeen,contacts.email',
) as Selection;
const LEAD_SELECTION = parseFields(LEAD_SELECTABLE, 'companyName,intentScore,status') as Selection;
const COMPANIES = 20_000;
// Visits of the big workspace over the last VISIT_DAYS days (every month of the retention but its
// first), two page views each: `/` first, then `/pricing` (one visit in ten), `/rare` (one in
// 25,000) or a blog post. The other workspace has visits of the same paths.
const VISITS = 100_000;
const VISIT_DAYS = 360;
const RETENTION_DAYS = 395;
const DAY_MS = 86_400_000;

function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

// Tables that grow with a workspace: never read whole. (The per-day counts and the horizons are
// small by design, and may be.)
const LARGE_TABLES = ['companies', 'contacts', 'leads', 'company_changes', 'lead_changes'];

function expectNoScanOfALargeTable(plan: PlanNode[]): void {
  const scanned = plan.filter((n) => n['Node Type'] === 'Seq Scan').map((n) => n['Relation Name']);
  expect(scanned.filter((name) => LARGE_TABLES.includes(name ?? ''))).toEqual([]);
}

describe('query plans of the serving statements', () => {
  let database: TestDatabase;
  let pool: Pool;
  let client: PoolClient;

  beforeAll(async () => {
    database = await createTestDatabase();
    // Direct, not through a pooler: the data is loaded in statements longer than a request may take.
    pool = new Pool({ connectionString: database.directUrl, max: 1 });
    client = await pool.connect();
    await client.query(`INSERT INTO workspaces (id, name, plan, updated_at)
      VALUES ('${WORKSPACE}', 'Plans', 'growth', now()), ('ws_other', 'Other', 'growth', now())`);
    await client.query(`
      INSERT INTO companies (id, workspace_id, name, domain, industry, size, country, city, revenue,
        intent_score, intent_level, icp_score, commercial_score, crm_status, visits_count,
        first_seen, last_seen)
      SELECT 'co_' || lpad(n::text, 6, '0'), CASE WHEN n <= ${COMPANIES} THEN '${WORKSPACE}' ELSE 'ws_other' END,
        'Company ' || n, 'c' || n || '.example', 'Software', '51-200', 'France', 'Lyon', '1M-10M',
        (n * 7919 % 1000) / 10.0, 'warm', 50, 50, 'new', 1,
        timestamptz '2026-01-01' + (n % 90) * interval '1 day',
        timestamptz '2026-01-01' + (n % 90) * interval '1 day'
      FROM generate_series(1, ${COMPANIES + 10_000}) n`);
    await client.query(`
      INSERT INTO contacts (id, workspace_id, company_id, name, job_title, seniority)
      SELECT 'ct_' || id, workspace_id, id, 'Someone', 'CTO', 'c_level' FROM companies`);
    await client.query(`
      INSERT INTO leads (id, workspace_id, company_id, contact_name, contact_title, intent_score,
        intent_level, signal, recommended_action, status, created_at)
      SELECT 'ld_' || id, workspace_id, id, 'Someone', 'CTO', intent_score, 'hot', 's', 'r', 'new',
        last_seen
      FROM companies`);
    await client.query(`
      INSERT INTO visits (workspace_id, id, company_id, started_at, ended_at, page_view_count,
        landing_page, device_type)
      SELECT CASE WHEN n <= ${VISITS} THEN '${WORKSPACE}' ELSE 'ws_other' END,
        'vi_' || lpad(n::text, 7, '0'),
        'co_' || lpad((CASE WHEN n <= ${VISITS} THEN n % ${COMPANIES} + 1
          ELSE ${COMPANIES} + 1 + n % 10000 END)::text, 6, '0'),
        start, start + interval '5 minutes', 2, '/', 'desktop'
      FROM generate_series(1, ${VISITS + 20_000}) n, LATERAL (SELECT date_trunc('second', now())
        - (n % ${VISIT_DAYS}) * interval '1 day' - (n % 1440) * interval '1 minute' AS start) s`);
    await client.query(`
      INSERT INTO page_views (workspace_id, visit_id, visit_started_at, position, company_id,
        hostname, path, viewed_at)
      SELECT v.workspace_id, v.id, v.started_at, p.position, v.company_id, 'www.example.com',
        CASE WHEN p.position = 0 THEN '/'
          WHEN substr(v.id, 4)::int % 25000 = 0 THEN '/rare'
          WHEN substr(v.id, 4)::int % 10 = 0 THEN '/pricing'
          ELSE '/blog/post-' || substr(v.id, 4)::int % 50 END,
        v.started_at + p.position * interval '1 minute'
      FROM visits v CROSS JOIN (VALUES (0), (1)) p (position)`);
    // Positions spread over many transactions, as the product's writes leave them.
    for (let batch = 0; batch < 20; batch++) {
      await client.query(
        `UPDATE companies SET visits_count = visits_count + 1
         WHERE workspace_id = $1 AND id >= $2 AND id < $3`,
        [
          WORKSPACE,
          `co_${String(batch * 1000).padStart(6, '0')}`,
          `co_${String((batch + 1) * 1000).padStart(6, '0')}`,
        ],
      );
    }
    await client.query('VACUUM ANALYZE');
    await client.query("SET jit = off; SET TimeZone = 'UTC'");
  }, 240_000);

  afterAll(async () => {
    client.release();
    await pool.end();
    await database.drop();
  });

  async function explain(sql: string, values: unknown[]): Promise<PlanNode[]> {
    const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
      `EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`,
      values,
    );
    return nodes(rows[0]['QUERY PLAN'][0].Plan);
  }

  /** No node sorts more than `limit` rows (a sort of the workspace would sort thousands). */
  function expectNoLargeSort(plan: PlanNode[], limit: number): void {
    for (const node of plan.filter((n) => n['Node Type'] === 'Sort')) {
      expect(node['Actual Rows']).toBeLessThanOrEqual(limit);
    }
  }

  describe.each([
    ['companies', COMPANY_LIST, 'companies_workspace_score_id_idx', undefined],
    ['leads', LEAD_LIST, 'leads_workspace_score_id_idx', undefined],
    ['companies', COMPANY_LIST, 'companies_workspace_score_id_idx', COMPANY_SELECTION],
    ['leads', LEAD_LIST, 'leads_workspace_score_id_idx', LEAD_SELECTION],
  ])('the %s list (fields: %j)', (name, list, orderIndex, selection) => {
    const sql = list.text([], selection).sized;
    it.each([
      ['the first page', 0],
      ['a page at a third of the list (read from the top)', 6_000],
      ['a page at two thirds (read backwards from the end)', 13_000],
    ])(
      '%s: page ids by an index-only scan of the order index, no large sort',
      async (_, offset) => {
        const plan = await explain(sql, [WORKSPACE, null, 200, offset, INLINE_BODY_BYTES]);
        const scans = plan.filter(
          (n) => n['Node Type'] === 'Index Only Scan' && n['Index Name'] === orderIndex,
        );
        expect(scans.length).toBeGreaterThan(0);
        // The scan that produced the page read offset + limit entries, at most.
        expect(Math.max(...scans.map((n) => n['Actual Rows']))).toBeLessThanOrEqual(offset + 200);
        expectNoScanOfALargeTable(plan);
        expectNoLargeSort(plan, 200);
      },
    );

    // Every filter given; about half of the workspace matches (scores are spread over 0..99.9).
    const filters: Record<string, Record<string, unknown>> = {
      companies: {
        intentLevel: ['warm'],
        crmStatus: ['new'],
        minIntentScore: 50,
        country: 'France',
      },
      leads: { intentLevel: ['hot'], status: ['new'], minIntentScore: 50 },
    };
    it.each([
      ['the first page', 0],
      ['a page at a third (read from the top)', 3_000],
      ['a page at two thirds (read backwards)', 6_500],
    ])(
      'filtered, %s: ids and total by index-only scans of the filter index, no large sort',
      async (_, offset) => {
        const given = filters[name];
        const plan = await explain(list.text(Object.keys(given), selection).sized, [
          WORKSPACE,
          null,
          200,
          offset,
          ...Object.values(given),
          INLINE_BODY_BYTES,
        ]);
        const filterIndex = orderIndex.replace('score_id', 'filters');
        const scans = plan.filter((n) => n['Index Name'] === filterIndex);
        expect(scans.length).toBeGreaterThan(0);
        expect(scans.every((n) => n['Node Type'] === 'Index Only Scan')).toBe(true);
        // The visibility map is set after VACUUM: the rows' heap pages are not read either.
        expect(scans.every((n) => n['Heap Fetches'] === 0)).toBe(true);
        expectNoScanOfALargeTable(plan);
        expectNoLargeSort(plan, 200);
      },
    );

    it('with since: no sequential scan, no large sort', async () => {
      const plan = await explain(sql, [
        WORKSPACE,
        new Date('2026-03-25T00:00:00Z'),
        200,
        0,
        INLINE_BODY_BYTES,
      ]);
      expectNoScanOfALargeTable(plan);
      expectNoLargeSort(plan, 200);
    });
  });

  describe('the companies list with a lookup', () => {
    const lookUp = (filter: 'domain' | 'q', value: unknown) =>
      explain(COMPANY_LIST.text([filter]).sized, [
        WORKSPACE,
        null,
        200,
        0,
        value,
        INLINE_BODY_BYTES,
      ]);

    it.each([
      ['two domains', ['C123.example', 'www.c4567.example.']],
      ['a domain of none', ['nowhere.example']],
    ])(
      'domain, %s: the rows from the domain index, nothing else read whole',
      async (_, domains) => {
        const plan = await lookUp('domain', domains);
        const scans = plan.filter((n) => n['Index Name'] === 'companies_workspace_domain_idx');
        expect(scans.length).toBeGreaterThan(0);
        // Looked up by the domains, not read for the whole workspace.
        for (const scan of scans) expect(scan['Index Cond']).toContain('= ANY');
        expectNoScanOfALargeTable(plan);
        expectNoLargeSort(plan, 200);
      },
    );

    it.each([
      ['matching 1,111 companies', 'pany 12'],
      ['matching one', 'pany 12345'],
      ['matching none', 'zzq'],
      ['of a domain', 'c777.exa'],
    ])('q %s: the rows from the trigram index, nothing else read whole', async (_, q) => {
      const plan = await lookUp('q', q);
      // Once, for the total and the page; by the text's trigrams, not for the whole workspace.
      const scans = plan.filter((n) => n['Index Name'] === 'companies_search_idx');
      expect(scans.map((n) => n['Node Type'])).toEqual(['Bitmap Index Scan']);
      expect(scans[0]['Index Cond']).toContain('~~*');
      expectNoScanOfALargeTable(plan);
    });
  });

  const companiesSelected = COMPANY_STATEMENTS.for(COMPANY_SELECTION);
  const leadsSelected = LEAD_STATEMENTS.for(LEAD_SELECTION);
  describe.each([
    [
      'companies',
      COMPANY_CHANGES_SQL,
      COMPANY_CHANGE_STREAM_SQL,
      'company_changes_feed_idx',
      'company_changes',
    ],
    ['leads', LEAD_CHANGES_SQL, LEAD_CHANGE_STREAM_SQL, 'lead_changes_feed_idx', 'lead_changes'],
    [
      'companies (with fields)',
      companiesSelected.changes,
      companiesSelected.stream,
      'company_changes_feed_idx',
      'company_changes',
    ],
    [
      'leads (with fields)',
      leadsSelected.changes,
      leadsSelected.stream,
      'lead_changes_feed_idx',
      'lead_changes',
    ],
  ])('the %s feed', (_name, sql, stream, feedIndex, table) => {
    /** The positions of the feed's first entry and of its 10,000th. */
    async function positions(): Promise<[string, string][]> {
      const { rows } = await client.query<{ txid: string; id: string }>(
        `SELECT txid::text, id FROM ${table} WHERE workspace_id = $1
         ORDER BY txid, id OFFSET $2 LIMIT 1`,
        [WORKSPACE, 10_000],
      );
      return [
        ['0', ''],
        [rows[0].txid, rows[0].id],
      ];
    }

    const feedScans = (plan: PlanNode[]) =>
      plan.filter(
        (n) =>
          ['Index Scan', 'Index Only Scan'].includes(n['Node Type']) &&
          n['Index Name'] === feedIndex,
      );

    it("finds the stream's page boundaries in the feed index alone, at any depth", async () => {
      for (const [txid, id] of await positions()) {
        const plan = await explain(stream.boundaries, [WORKSPACE, txid, id, 1000, 10]);
        const scans = feedScans(plan);
        expect(scans.map((n) => n['Node Type'])).toEqual(['Index Only Scan']);
        expect(scans[0]['Actual Rows']).toBeLessThanOrEqual(10_000);
        expectNoScanOfALargeTable(plan);
      }
    });

    it("reads a stream's range of the feed index at any depth, and sorts nothing large", async () => {
      for (const [txid, id] of await positions()) {
        const [end] = await client
          .query<{ txid: string; id: string }>(stream.boundaries, [WORKSPACE, txid, id, 1000, 1])
          .then(({ rows }) => rows);
        const plan = await explain(sizedFeedSql(stream.range, 8), [
          WORKSPACE,
          txid,
          id,
          1000,
          null,
          end.txid,
          end.id,
          INLINE_BODY_BYTES,
        ]);
        const scans = feedScans(plan);
        expect(scans.length).toBeGreaterThan(0);
        expect(Math.min(...scans.map((n) => n['Actual Rows']))).toBeLessThanOrEqual(1000);
        expectNoScanOfALargeTable(plan);
        expectNoLargeSort(plan, 1000);
      }
    });

    it('reads one range of the feed index at any depth, and sorts nothing large', async () => {
      for (const [txid, id] of await positions()) {
        const plan = await explain(sizedFeedSql(sql), [
          WORKSPACE,
          txid,
          id,
          1000,
          null,
          INLINE_BODY_BYTES,
        ]);
        const scans = feedScans(plan);
        expect(scans.length).toBeGreaterThan(0);
        // The page's scan stops after its 1,000 entries, wherever it starts.
        expect(Math.min(...scans.map((n) => n['Actual Rows']))).toBeLessThanOrEqual(1000);
        expectNoScanOfALargeTable(plan);
        expectNoLargeSort(plan, 1000);
      }
    });
  });
  describe('the visits', () => {
    /** A month's partition of visits or page_views, as visit_partitions_make names it. */
    interface Month {
      name: string;
      parent: 'visits' | 'page_views';
      /** The instants the month starts (inclusive) and ends (exclusive). */
      start: number;
      end: number;
      rows: number;
    }
    let months: Month[];
    /** The index of the partitioned table that each partition's index is attached to. */
    let parentIndex: Map<string, string>;

    beforeAll(async () => {
      const partitions = await client.query<{
        name: string;
        parent: Month['parent'];
        rows: number;
      }>(
        `SELECT c.relname AS name, p.relname AS parent, c.reltuples::float8 AS rows
         FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
         WHERE p.relname IN ('visits', 'page_views')`,
      );
      months = partitions.rows.map((row) => {
        const [year, month] = row.name
          .slice(row.parent.length + 1)
          .split('_')
          .map(Number);
        return { ...row, start: Date.UTC(year, month - 1, 1), end: Date.UTC(year, month, 1) };
      });
      const indexes = await client.query<{ name: string; parent: string }>(
        `SELECT c.relname AS name, p.relname AS parent
         FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
         WHERE p.relkind = 'I' AND p.relname LIKE ANY (ARRAY['visits%', 'page_views%'])`,
      );
      parentIndex = new Map(indexes.rows.map((row) => [row.name, row.parent]));
      // The seeded months hold rows: a sequential scan of one would read them.
      expect(months.filter((month) => month.rows > 0).length).toBeGreaterThanOrEqual(24);
    });

    const ago = (days: number) => new Date(Date.now() - days * DAY_MS);
    const ranges = (...patterns: string[]) => {
      const made = patterns.map(pathRange);
      return [made.map(([from]) => from), made.map(([, to]) => to)];
    };

    /** The plan's scans of one table's months, each with its month and the parent's index. */
    function monthScans(plan: PlanNode[], parent: Month['parent']) {
      return plan.flatMap((node) => {
        const month = months.find((m) => m.name === node['Relation Name']);
        if (month?.parent !== parent) return [];
        return [{ node, month, index: parentIndex.get(node['Index Name'] ?? '') }];
      });
    }

    /** The scans of the months that hold rows (an empty month is read as the planner likes). */
    const filledScans = (plan: PlanNode[], parent: Month['parent']) =>
      monthScans(plan, parent).filter((scan) => scan.month.rows > 0);

    /** No month that holds rows is read by a sequential scan (an empty month may be, and is). */
    function expectNoScanOfAMonth(plan: PlanNode[]): void {
      const scanned = plan
        .filter((n) => n['Node Type'] === 'Seq Scan')
        .map((n) => months.find((m) => m.name === n['Relation Name']))
        .filter((month) => month !== undefined && month.rows > 0)
        .map((month) => month?.name);
      expect(scanned).toEqual([]);
    }

    /** The months a statement may read: those that end after `from`, each of them. */
    const monthsAfter = (parent: Month['parent'], from: number) =>
      months
        .filter((m) => m.parent === parent && m.end > from)
        .map((m) => m.name)
        .sort();

    /** The visits' scans: all of the index, each read at most `limit` + 1 entries. */
    function expectVisitsFrom(plan: PlanNode[], index: string, limit = 200): void {
      const scans = filledScans(plan, 'visits');
      expect(scans.length).toBeGreaterThan(0);
      expect(scans.map((scan) => scan.index)).toEqual(scans.map(() => index));
      const read = scans.reduce((sum, scan) => sum + scan.node['Actual Rows'], 0);
      expect(read).toBeLessThanOrEqual(limit + 1);
    }

    /** A page's page views: each visit's, by the key, in its own month. */
    function expectPagesByKey(plan: PlanNode[]): void {
      const read = filledScans(plan, 'page_views').filter((scan) => scan.node['Actual Loops'] > 0);
      expect(read.length).toBeGreaterThan(0);
      for (const scan of read) expect(scan.index).toBe('page_views_pkey');
    }

    // $1 workspace, $2 retention, $3 since, $4 until, $5 $6 cursor, $7 limit, $8 companies,
    // $9 $10 page patterns, $11 the largest data.
    const visitList = (given: Record<number, unknown>) => {
      const values: unknown[] = [WORKSPACE, RETENTION_DAYS, null, null, null, null, 200];
      values.push(null, null, null, INLINE_BODY_BYTES);
      for (const [parameter, value] of Object.entries(given)) values[Number(parameter) - 1] = value;
      return values;
    };

    it('GET /v1/visits, the first page: the newest month read backwards from the order index', async () => {
      const plan = await explain(VISIT_STATEMENTS.whole.list, visitList({}));
      expectVisitsFrom(plan, 'visits_workspace_started_idx');
      // The newest months first, and none older than the page's visits opened.
      const opened = monthScans(plan, 'visits').filter((scan) => scan.node['Actual Loops'] > 0);
      for (const { month } of opened) expect(month.end).toBeGreaterThan(Date.now() - 32 * DAY_MS);
      expectPagesByKey(plan);
      expectNoScanOfAMonth(plan);
      expectNoLargeSort(plan, 201);
    });

    it('a cursor page deep in the window: one range of the order index from the cursor', async () => {
      const { rows } = await client.query<{ started_at: Date; id: string }>(
        `SELECT started_at, id FROM visits WHERE workspace_id = $1
         ORDER BY started_at DESC, id DESC OFFSET 60000 LIMIT 1`,
        [WORKSPACE],
      );
      const plan = await explain(
        VISIT_STATEMENTS.whole.list,
        visitList({ 5: rows[0].started_at, 6: rows[0].id }),
      );
      expectVisitsFrom(plan, 'visits_workspace_started_idx');
      for (const { node } of filledScans(plan, 'visits')) {
        expect(node['Index Cond']).toContain('ROW(started_at, id) <');
      }
      expectPagesByKey(plan);
      expectNoScanOfAMonth(plan);
      expectNoLargeSort(plan, 201);
    });

    it('with since: only the months from since on are in the plan', async () => {
      const since = ago(75);
      const plan = await explain(VISIT_STATEMENTS.whole.list, visitList({ 3: since }));
      expectVisitsFrom(plan, 'visits_workspace_started_idx');
      expect(
        monthScans(plan, 'visits')
          .map((scan) => scan.month.name)
          .sort(),
      ).toEqual(monthsAfter('visits', since.getTime()));
      expectPagesByKey(plan);
      expectNoScanOfAMonth(plan);
    });

    it.each([
      ['GET /v1/visits?companyId=', VISIT_STATEMENTS.whole.list],
      ['GET /v1/companies/{id}/visits', VISIT_STATEMENTS.whole.companyList],
    ])("%s: the company's visits from the company index", async (_, sql) => {
      const plan = await explain(sql, visitList({ 8: ['co_000123'] }));
      expectVisitsFrom(plan, 'visits_workspace_company_started_idx');
      for (const { node } of filledScans(plan, 'visits')) {
        expect(node['Index Cond']).toContain('company_id = ANY');
      }
      expectNoScanOfAMonth(plan);
      expectNoLargeSort(plan, 201);
    });

    it.each([
      ['a path almost every visit opens', ['/']],
      ['a path of one visit in ten', ['/pricing']],
      ['a path almost none opens', ['/rare']],
      ['a prefix and a path', ['/blog/*', '/rare']],
    ])(
      'page, %s: the visits from the order index, their page views from the key or the path index',
      async (_, patterns) => {
        const [from, to] = ranges(...patterns);
        const plan = await explain(VISIT_STATEMENTS.whole.list, visitList({ 9: from, 10: to }));
        const visits = filledScans(plan, 'visits');
        expect(new Set(visits.map((scan) => scan.index))).toEqual(
          new Set(['visits_workspace_started_idx']),
        );
        const pages = filledScans(plan, 'page_views').filter(
          (scan) => scan.node['Actual Loops'] > 0,
        );
        expect(pages.length).toBeGreaterThan(0);
        for (const { index, node } of pages) {
          expect(['page_views_pkey', 'page_views_workspace_path_idx']).toContain(index);
          // A path's range of this workspace's page views, never every workspace's.
          if (index === 'page_views_workspace_path_idx') {
            expect(node['Index Cond']).toContain(`workspace_id = '${WORKSPACE}'::text`);
          }
        }
        expectNoScanOfAMonth(plan);
        expectNoLargeSort(plan, 201);
      },
    );

    // $5 $6 the ranges, $7 visitedSince, $8 the retention, $9 the largest body.
    const visitedList = (patterns: string[], visitedSince: Date | null) => [
      WORKSPACE,
      null,
      200,
      0,
      ...ranges(...patterns),
      visitedSince,
      RETENTION_DAYS,
      INLINE_BODY_BYTES,
    ];

    /** The nodes that ran (a branch not taken, or a subplan not needed, has no loop). */
    const ran = (plan: PlanNode[]) => plan.filter((node) => node['Actual Loops'] > 0);

    it.each([
      ['a page almost every company opens, default visitedSince', ['/'], null],
      ['a page almost every company opens, visitedSince 200 days ago', ['/'], 200],
      ['a page almost none opens, default visitedSince', ['/rare'], null],
      ['a page almost none opens, visitedSince 200 days ago', ['/rare'], 200],
      ['a prefix and a page, default visitedSince', ['/blog/*', '/rare'], null],
    ])(
      'GET /v1/companies?visitedPage=, %s: the companies from visited_paths alone, by the cheaper of walking or fetching, and the exact total',
      async (_, patterns, daysAgo) => {
        const since = daysAgo === null ? null : ago(daysAgo);
        const sql = COMPANY_LIST.text(['visitedPage']).sized;
        const plan = ran(await explain(sql, visitedList(patterns, since)));
        const { rows } = await client.query<{ body: string }>(sql, visitedList(patterns, since));
        const { rows: expected } = await client.query<{ n: number }>(
          `SELECT count(DISTINCT company_id)::int AS n FROM page_views
           WHERE workspace_id = $1 AND (path = ANY($2) OR path LIKE '/blog/%' AND '/blog/*' = ANY($2))
             AND viewed_at >= $3 AND visit_started_at >= now() - make_interval(days => $4)`,
          [WORKSPACE, patterns, since ?? ago(30), RETENTION_DAYS],
        );
        const total = expected[0].n;
        expect((JSON.parse(rows[0].body) as { total: number }).total).toBe(total);

        // No page view is read, nor named (planning their months took most of the planning):
        // the window starts after the retention's first day.
        expect(sql).not.toContain('page_views');
        expect(monthScans(plan, 'page_views')).toEqual([]);
        const paths = plan.filter((node) => node['Relation Name'] === 'visited_paths');
        expect(paths.length).toBeGreaterThan(0);
        for (const node of paths) {
          expect(node['Node Type']).toBe('Index Only Scan');
          expect(node['Heap Fetches']).toBe(0);
          expect(node['Index Cond']).toContain(`workspace_id = '${WORKSPACE}'::text`);
          // A range of paths is read once per pattern; a probe (once per company) is a lookup of
          // the company's key, never a range of paths.
          if (node['Actual Loops'] > patterns.length) {
            expect(node['Index Name']).toBe('visited_paths_pkey');
          }
        }
        // The page: either the order index walked, one probe of the key per company, or the
        // companies found fetched by id. Walking costs about limit x companies / total probes,
        // fetching about total: neither is more than twice the cheaper.
        const probes = paths
          .filter((node) => node['Index Name'] === 'visited_paths_pkey')
          .reduce((sum, node) => sum + node['Actual Loops'], 0);
        const cheaper = Math.min(total, (200 * COMPANIES) / Math.max(total, 1));
        expect(probes).toBeLessThanOrEqual(2 * cheaper + 200);
        expectNoScanOfALargeTable(plan);
        expectNoLargeSort(plan, Math.max(200, 2 * cheaper));
      },
    );

    it("GET /v1/companies?visitedPage=, visitedSince before the retention starts: the first day from the page views' path index, the months after it not read", async () => {
      const sql = COMPANY_LIST.text(['visitedPage@early']).sized;
      const plan = ran(await explain(sql, visitedList(['/'], ago(500))));
      const pages = monthScans(plan, 'page_views');
      const retained = Date.now() - RETENTION_DAYS * DAY_MS;
      // The months that may hold a view of the retention's first day, each from the path index.
      expect(pages.map((scan) => scan.month.name).sort()).toEqual(
        months
          .filter(
            (m) => m.parent === 'page_views' && m.end > retained && m.start < retained + DAY_MS,
          )
          .map((m) => m.name)
          .sort(),
      );
      for (const { node, index, month } of pages) {
        if (month.rows === 0) continue; // read as the planner likes
        expect(index).toBe('page_views_workspace_path_idx');
        expect(node['Heap Fetches'] ?? 0).toBe(0);
      }
      expectNoScanOfAMonth(plan);
      const { rows } = await client.query<{ body: string }>(sql, visitedList(['/'], ago(500)));
      const { rows: expected } = await client.query<{ n: number }>(
        `SELECT count(DISTINCT company_id)::int AS n FROM page_views
         WHERE workspace_id = $1 AND path = '/' AND visit_started_at >= now() - make_interval(days => $2)`,
        [WORKSPACE, RETENTION_DAYS],
      );
      expect((JSON.parse(rows[0].body) as { total: number }).total).toBe(expected[0].n);
    });
  });
});

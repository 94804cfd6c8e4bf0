import type { PoolClient } from 'pg';
import { Pool } from 'pg';
import {
  COMPANY_CHANGE_STREAM_SQL,
  COMPANY_CHANGES_SQL,
  COMPANY_LIST,
} from '../src/companies/companies.sql';
import { sizedFeedSql } from '../src/changes/change-feed';
import { INLINE_BODY_BYTES } from '../src/items/body-budget';
import { LEAD_CHANGE_STREAM_SQL, LEAD_CHANGES_SQL, LEAD_LIST } from '../src/leads/leads.sql';
import { COMPANY_STATEMENTS } from '../src/companies/companies.sql';
import { COMPANY_SELECTABLE } from '../src/companies/company.fields';
import { parseFields, type Selection } from '../src/items/field-selection';
import { LEAD_STATEMENTS } from '../src/leads/leads.sql';
import { LEAD_SELECTABLE } from '../src/leads/lead.fields';
import { createTestDatabase, type TestDatabase } from './support/database';

/*
 * The plan shapes the benchmark's numbers depend on, pinned on a workspace large enough for the
 * planner to choose as it does at scale (20,000 companies among 30,000, analyzed): a plan
 * regression fails here instead of waiting for the next `npm run bench`.
 * - Lists: a page's ids come from the covering order index alone (an index-only scan, so an
 *   offset skips index entries, never rows), and nothing sorts the workspace's rows.
 * - Feeds: a page is one range of the (workspace_id, txid, id) index, whatever its depth.
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
  }, 120_000);

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
});

import { Client } from 'pg';
import { createTestDatabase, type TestDatabase } from '../../support/database';

/*
 * The change-tracking triggers plan their queries for the transition tables at hand, every run
 * (migration 20261124100000_change_tracking_plans). PL/pgSQL would otherwise keep the plan of a
 * query's first run in the session: planned for empty transition tables (an upsert that updates
 * nothing fires the UPDATE trigger all the same), it joined them by nested loops, and a later
 * statement of 2,000 rows scanned one tuplestore 2,000 times (quadratic: 2.3 s instead of 6 ms).
 *
 * The bound on contacts per company counts each company of a statement on its own (migration
 * 20261127000000_contacts_bound_plan): joined on the workspace, its count met every new contact
 * with every contact of the workspace (60,000 contacts: 600 million rows, 79 s).
 *
 * auto_explain, loaded in the test's own session, sends the plans of the trigger's queries to the
 * client as notices: no scan of a transition table may run more than a few times, and no step of a
 * plan may handle more rows than a small multiple of the statement's.
 */
const ROWS = 2_000;

describe('change tracking plans', () => {
  let database: TestDatabase;
  let client: Client;
  const notices: string[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    client = new Client({ connectionString: database.url });
    await client.connect();
    client.on('notice', (notice) => notices.push(notice.message ?? ''));
    await client.query(`INSERT INTO workspaces (id, name, plan, updated_at)
      VALUES ('ws_plans', 'Plans', 'growth', now())`);
    await client.query(`
      INSERT INTO companies (id, workspace_id, name, domain, industry, size, country, city, revenue,
        intent_score, intent_level, icp_score, commercial_score, crm_status, visits_count,
        first_seen, last_seen)
      SELECT 'co_' || n, 'ws_plans', 'Company ' || n, 'c.example', 'Software', '51-200', 'France',
        'Lyon', '1M-10M', 50, 'warm', 50, 50, 'new', 1, now(), now()
      FROM generate_series(1, ${ROWS}) n`);
    await client.query(`
      INSERT INTO contacts (id, workspace_id, company_id, name, job_title, seniority)
      SELECT 'ct_' || id, workspace_id, id, 'Someone', 'CTO', 'c_level' FROM companies`);
  });

  afterAll(async () => {
    await client.end();
    await database.drop();
  });

  async function explainTriggers(): Promise<void> {
    await client.query("LOAD 'auto_explain'");
    await client.query(`SET auto_explain.log_min_duration = 0;
      SET auto_explain.log_nested_statements = on; SET auto_explain.log_analyze = on;
      SET auto_explain.log_level = notice; SET client_min_messages = notice`);
  }

  /**
   * The rows each step of the plans handled, over all its loops. A step's rows are its average
   * per loop: a whole number up to PostgreSQL 17, with two decimals from 18 ("rows=2000.00").
   */
  function rowsPerStep(): number[] {
    return notices
      .flatMap((plan) => plan.split('\n'))
      .map((line) => /actual time=\S+ rows=([\d.]+) loops=(\d+)/.exec(line))
      .filter((match) => match !== null)
      .map(([, rows, loops]) => Number(rows) * Number(loops));
  }

  it('a large update after an empty one in the same session scans each transition table once', async () => {
    await explainTriggers();

    // The first run of the UPDATE branch in this session, on empty transition tables.
    await client.query('UPDATE contacts SET name = name WHERE false');
    await client.query("UPDATE companies SET name = name WHERE workspace_id = 'none'");
    notices.length = 0;
    // Then thousands of rows through the same branches: contacts (their companies) and companies.
    await client.query(`UPDATE contacts SET job_title = 'CEO' WHERE workspace_id = 'ws_plans'`);
    await client.query(`UPDATE companies SET name = name || '.' WHERE workspace_id = 'ws_plans'`);

    const scans = notices
      .flatMap((plan) => plan.split('\n'))
      .filter((line) => line.includes('Named Tuplestore Scan'));
    expect(scans.length).toBeGreaterThan(0);
    const loops = scans.map((line) => Number(/loops=(\d+)/.exec(line)?.[1] ?? 0));
    expect(Math.max(...loops)).toBeLessThanOrEqual(2);
    // And the work was done: every company moved in the feed's table.
    const { rows } = await client.query<{ moved: string }>(
      `SELECT count(DISTINCT txid)::text AS moved FROM company_changes WHERE workspace_id = 'ws_plans'`,
    );
    expect(rows[0].moved).toBe('1');
  });

  it('adding contacts to thousands of companies at once counts each company on its own', async () => {
    await explainTriggers();
    notices.length = 0;
    // Two more contacts for each company of the workspace (three each, under the bound of 10).
    const inserted = 2 * ROWS;
    await client.query(`
      INSERT INTO contacts (id, workspace_id, company_id, name, job_title, seniority)
      SELECT 'ct_' || id || '_' || k, workspace_id, id, 'Someone else', 'CFO', 'c_level'
      FROM companies, generate_series(1, 2) k WHERE workspace_id = 'ws_plans'`);

    const steps = rowsPerStep();
    expect(steps.length).toBeGreaterThan(0);
    // The workspace-wide join handled 6 million rows here (every new contact with every contact).
    expect(Math.max(...steps)).toBeLessThanOrEqual(10 * inserted);
    // And the bound still holds, counted per company: an 11th contact of one company is refused.
    await expect(
      client.query(`
        INSERT INTO contacts (id, workspace_id, company_id, name, job_title, seniority)
        SELECT 'ct_extra_' || k, 'ws_plans', 'co_1', 'One too many', 'CFO', 'c_level'
        FROM generate_series(1, 8) k`),
    ).rejects.toMatchObject({ code: '23514', constraint: 'contacts_per_company' });
  });
});

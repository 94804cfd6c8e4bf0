import { Client } from 'pg';
import { createTestDatabase, type TestDatabase } from './support/database';

/*
 * The change-tracking triggers plan their queries for the transition tables at hand, every run
 * (migration 20261124100000_change_tracking_plans). PL/pgSQL would otherwise keep the plan of a
 * query's first run in the session: planned for empty transition tables (an upsert that updates
 * nothing fires the UPDATE trigger all the same), it joined them by nested loops, and a later
 * statement of 2,000 rows scanned one tuplestore 2,000 times (quadratic: 2.3 s instead of 6 ms).
 *
 * auto_explain, loaded in the test's own session, sends the plans of the trigger's queries to the
 * client as notices: no scan of a transition table may run more than a few times.
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

  it('a large update after an empty one in the same session scans each transition table once', async () => {
    await client.query("LOAD 'auto_explain'");
    await client.query(`SET auto_explain.log_min_duration = 0;
      SET auto_explain.log_nested_statements = on; SET auto_explain.log_analyze = on;
      SET auto_explain.log_level = notice; SET client_min_messages = notice`);

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
});

// Benchmark data: one large workspace and many small ones, generated inside PostgreSQL.
//
// Every row is made by a set-based INSERT … SELECT (one statement per table and workspace group),
// so millions of rows never cross the wire. Randomness is PostgreSQL's random() after setseed() in
// this one session: the same seed and scale give the same data. Each value is drawn once per row in
// an inner select (the outer one derives from it, e.g. the level from the score), over rows whose
// order is fixed: a generate_series, or the companies sorted by id. Joins and sorts above the draws
// reorder rows but cannot change their values, whatever plan the planner picks.
//
// The rows go through the real tables with their constraints and triggers on: the foreign keys are
// checked and the summary triggers of the migrations count the rows as they would in production.
import { Client } from 'pg';

export interface BenchScale {
  largeCompanies: number;
  largeLeads: number;
  smallWorkspaces: number;
  smallCompanies: number;
  smallLeads: number;
  contactsPerCompany: number;
  /** Visits of the large workspace and of each small one (each with 1 to 8 page views). */
  largeVisits: number;
  smallVisits: number;
}

export const FULL_SCALE: BenchScale = {
  largeCompanies: 1_000_000,
  largeLeads: 300_000,
  smallWorkspaces: 200,
  smallCompanies: 5_000,
  smallLeads: 1_500,
  contactsPerCompany: 3,
  largeVisits: 5_000_000,
  smallVisits: 1_000,
};

export const SMOKE_SCALE: BenchScale = {
  largeCompanies: 20_000,
  largeLeads: 6_000,
  smallWorkspaces: 5,
  smallCompanies: 500,
  smallLeads: 150,
  contactsPerCompany: 3,
  largeVisits: 40_000,
  smallVisits: 100,
};

export const LARGE_WORKSPACE_ID = 'ws_bench_large';

/** The id of the n-th small workspace, 1-based: `ws_bench_small_0001`. */
export function smallWorkspaceId(n: number): string {
  return `ws_bench_small_${String(n).padStart(4, '0')}`;
}

/** A SQL array literal of constant strings (only this file's word lists go through it). */
function arr(values: readonly string[]): string {
  return `ARRAY[${values.map((v) => `'${v.replaceAll("'", "''")}'`).join(',')}]`;
}

/** A 2-D SQL array literal; PostgreSQL requires every row to have the same length. */
function arr2(rows: readonly (readonly string[])[]): string {
  return `ARRAY[${rows.map((r) => arr(r)).join(',')}]`;
}

/** A 1-based index into `weights`, drawn with those relative weights. */
function weighted(weights: readonly number[]): string {
  const total = weights.reduce((a, b) => a + b, 0);
  let sum = 0;
  const bounds = weights.map((w) => {
    const lower = sum / total;
    sum += w;
    return lower;
  });
  // width_bucket returns the number of bounds <= the operand: 1 … weights.length here.
  return `width_bucket(random(), ARRAY[${bounds.join(',')}]::float8[])`;
}

/** A uniform 1-based index into a list of n elements. */
function uniform(n: number): string {
  return `(1 + floor(random() * ${n}))::int`;
}

// A score in 0..100 with one decimal, so that many rows tie; squaring makes high scores rarer.
const SKEWED_SCORE = 'round((100 * random() ^ 2)::numeric, 1)::float8';
const FLAT_SCORE = 'round((100 * random())::numeric, 1)::float8';
const LEVEL = (score: string): string =>
  `(CASE WHEN ${score} >= 70 THEN 'hot' WHEN ${score} >= 40 THEN 'warm' ELSE 'cold' END)::"IntentLevel"`;

// Company names are prefix + root + suffix ("Novadata Systems"): 1,248 names, so many repeat.
const words = (list: string): string[] => list.split(' ');
const NAME_PREFIXES = words(
  'Nova Alpha Blue Green Silver Bright Prime North Atlas Vertex Orion Lumen',
);
const NAME_ROOTS = words('soft data logic works labs flow net tech cloud bridge stone field path');
const NAME_SUFFIXES = [
  'Systems',
  'Solutions',
  'Group',
  'Partners',
  'Industries',
  'Consulting',
  'Technologies',
  'Services',
];
const INDUSTRIES = [
  'Software',
  'Financial Services',
  'Manufacturing',
  'Retail',
  'Healthcare',
  'Logistics',
  'Consulting',
  'Energy',
  'Media',
  'Education',
];
const SIZES = ['1-10', '11-50', '51-200', '201-500', '501-1000', '1001-5000', '5000+'];
const SIZE_WEIGHTS = [25, 30, 20, 10, 6, 6, 3];
// The revenue band is the size's band, give or take one.
const REVENUES = ['< 1M€', '1-5M€', '5-20M€', '20-50M€', '50-100M€', '100-500M€', '> 500M€'];
// Countries, their weights, top-level domains and four cities each (index-aligned).
const COUNTRIES = [
  'France',
  'Germany',
  'United Kingdom',
  'Spain',
  'Italy',
  'Netherlands',
  'Belgium',
  'United States',
  'Switzerland',
];
const COUNTRY_WEIGHTS = [30, 15, 13, 9, 8, 7, 6, 8, 4];
const TLDS = ['fr', 'de', 'co.uk', 'es', 'it', 'nl', 'be', 'com', 'ch'];
const CITIES = [
  ['Paris', 'Lyon', 'Toulouse', 'Nantes'],
  ['Berlin', 'Munich', 'Hamburg', 'Frankfurt'],
  ['London', 'Manchester', 'Birmingham', 'Edinburgh'],
  ['Madrid', 'Barcelona', 'Valencia', 'Seville'],
  ['Milan', 'Rome', 'Turin', 'Bologna'],
  ['Amsterdam', 'Rotterdam', 'Utrecht', 'Eindhoven'],
  ['Brussels', 'Antwerp', 'Ghent', 'Liège'],
  ['New York', 'San Francisco', 'Boston', 'Chicago'],
  ['Zurich', 'Geneva', 'Basel', 'Lausanne'],
];
const CRM_STATUSES = ['new', 'qualified', 'in_crm', 'contacted', 'won', 'lost'];
const CRM_WEIGHTS = [45, 15, 12, 15, 6, 7];

// Small lists on purpose: contacts of one company share names now and then (name ties).
const FIRST_NAMES = [
  'Marie',
  'Thomas',
  'Julie',
  'Nicolas',
  'Sophie',
  'Lucas',
  'Emma',
  'Hugo',
  'Léa',
  'Jérôme',
  'Anna',
  'David',
  'Laura',
  'Paul',
  'Chloé',
  'Max',
];
const LAST_NAMES = [
  'Martin',
  'Bernard',
  'Dubois',
  'Müller',
  'Schmidt',
  'Smith',
  'Jones',
  'García',
  'Rossi',
  'de Vries',
  'Peeters',
  'Lefèvre',
  'Moreau',
  'Fischer',
  'Brown',
  'Romano',
];
// Seniority in enum order, its weights, and four titles each (index-aligned).
const SENIORITIES = ['c_level', 'vp', 'director', 'manager', 'ic'];
const SENIORITY_WEIGHTS = [6, 9, 15, 25, 45];
const TITLES = [
  ['CEO', 'CTO', 'CFO', 'CMO'],
  ['VP Sales', 'VP Marketing', 'VP Engineering', 'VP Operations'],
  ['Sales Director', 'Marketing Director', 'IT Director', 'HR Director'],
  ['Sales Manager', 'Marketing Manager', 'Product Manager', 'Account Manager'],
  ['Account Executive', 'Software Engineer', 'Business Developer', 'Data Analyst'],
];
const SIGNALS = [
  'Visited the pricing page 3 times',
  'Requested a demo',
  'Downloaded the buyer guide',
  'Compared plans',
  'Came back after 30 days',
  'Read 5 blog posts this week',
  'Opened the integration docs',
  'Viewed the careers page',
];
const ACTIONS = [
  'Call within 24 hours',
  'Send a case study',
  'Book a demo',
  'Add to the nurture sequence',
  'Connect on LinkedIn',
  'Share pricing',
];
const LEAD_STATUSES = ['new', 'contacted', 'qualified', 'converted', 'dismissed'];
const LEAD_STATUS_WEIGHTS = [40, 25, 15, 8, 12];

// ASCII e-mail local parts from the accented names.
const ascii = (sql: string): string => `translate(lower(${sql}), 'éèüíç ', 'eeuic')`;

/** The company id of (workspace, n): md5-based, so that id order is not insertion order. */
const companyId = (ws: string, n: string): string => `'co_' || left(md5(${ws} || ':' || ${n}), 20)`;

/**
 * Inserts `perWorkspace` companies into each of `workspaceIds`, in one statement. One series over
 * all rows (not a join of two series) so that the row order, hence the random draws, is fixed.
 */
async function insertCompanies(
  client: Client,
  workspaceIds: string[],
  perWorkspace: number,
  now: Date,
) {
  await client.query(
    `INSERT INTO companies (id, workspace_id, name, domain, industry, size, country, city, revenue,
       siren, intent_score, intent_level, icp_score, commercial_score, crm_status, visits_count,
       first_seen, last_seen)
     SELECT ${companyId('ws', 'n')}, ws,
       p || r || ' ' || (${arr(NAME_SUFFIXES)})[sfx],
       lower(p || r) || '-' || n || '.' || (${arr(TLDS)})[ctry],
       industry, (${arr(SIZES)})[size], (${arr(COUNTRIES)})[ctry], (${arr2(CITIES)})[ctry][city],
       (${arr(REVENUES)})[least(7, greatest(1, size + rev_shift))],
       CASE WHEN ctry = 1 AND has_siren THEN siren END,
       score, ${LEVEL('score')}, icp, commercial, (${arr(CRM_STATUSES)})[crm]::"CrmStatus",
       visits, last_seen - first_seen_back, last_seen
     FROM (
       SELECT ($1::text[])[(i - 1) / $2 + 1] AS ws, (i - 1) % $2 + 1 AS n,
         (${arr(NAME_PREFIXES)})[${uniform(NAME_PREFIXES.length)}] AS p,
         (${arr(NAME_ROOTS)})[${uniform(NAME_ROOTS.length)}] AS r,
         ${uniform(NAME_SUFFIXES.length)} AS sfx,
         (${arr(INDUSTRIES)})[${uniform(INDUSTRIES.length)}] AS industry,
         ${weighted(SIZE_WEIGHTS)} AS size,
         floor(random() * 3)::int - 1 AS rev_shift,
         ${weighted(COUNTRY_WEIGHTS)} AS ctry,
         ${uniform(4)} AS city,
         random() < 0.6 AS has_siren,
         lpad(floor(random() * 1e9)::bigint::text, 9, '0') AS siren,
         ${SKEWED_SCORE} AS score,
         ${FLAT_SCORE} AS icp,
         ${FLAT_SCORE} AS commercial,
         ${weighted(CRM_WEIGHTS)} AS crm,
         1 + floor(199 * random() ^ 3)::int AS visits,
         -- Squared so that recent days are denser; whole milliseconds, as TIMESTAMPTZ(3) stores.
         date_trunc('milliseconds', $3::timestamptz - interval '730 days' * random() ^ 2) AS last_seen,
         date_trunc('milliseconds', interval '365 days' * random()) AS first_seen_back
       FROM generate_series(1, $2 * cardinality($1::text[])) AS i
     ) g`,
    [workspaceIds, perWorkspace, now],
  );
}

/**
 * Inserts contactsPerCompany contacts for every company, in one statement, in company id order:
 * the (company_id, …) index and the foreign key lookups then walk their indexes in order instead of
 * jumping around (the largest insert: in order it takes two thirds of the time it takes in random
 * order, 103 s against 152 s at full scale before the bound of 10 contacts per company, which locks
 * and counts each company and makes it 230 s). The contact id is its
 * company's hex plus k, so the primary key fills in order too (nothing reads contacts by id). The
 * sort also fixes the order of the random draws; the set-returning function in the inner select
 * list keeps the k rows of a company together. Phones are French mobiles for everyone.
 */
async function insertContacts(client: Client, contactsPerCompany: number) {
  await client.query(
    `INSERT INTO contacts (id, workspace_id, company_id, name, job_title, email, phone, linkedin,
       seniority)
     SELECT 'ct_' || substr(company_id, 4) || lpad(to_hex(k), 2, '0'), workspace_id, company_id,
       first || ' ' || last, (${arr2(TITLES)})[sen][title],
       CASE WHEN has_email THEN ${ascii('first')} || '.' || ${ascii('last')} || '@' || domain END,
       CASE WHEN has_phone THEN phone END,
       CASE WHEN has_linkedin
         THEN 'https://www.linkedin.com/in/' || ${ascii('first')} || '-' || ${ascii('last')} || '-' || k
       END,
       (${arr(SENIORITIES)})[sen]::"Seniority"
     FROM (
       SELECT company_id, workspace_id, domain, k,
         (${arr(FIRST_NAMES)})[${uniform(FIRST_NAMES.length)}] AS first,
         (${arr(LAST_NAMES)})[${uniform(LAST_NAMES.length)}] AS last,
         ${weighted(SENIORITY_WEIGHTS)} AS sen,
         ${uniform(4)} AS title,
         random() < 0.7 AS has_email,
         random() < 0.3 AS has_phone,
         '+33 6 ' || lpad(floor(random() * 1e8)::bigint::text, 8, '0') AS phone,
         random() < 0.5 AS has_linkedin
       FROM (
         SELECT id AS company_id, workspace_id, domain, generate_series(1, $1::int) AS k
         FROM (SELECT id, workspace_id, domain FROM companies ORDER BY id) s
       ) c
     ) g`,
    [contactsPerCompany],
  );
}

/**
 * Inserts `perWorkspace` leads into each of `workspaceIds`, each on a random company among the
 * `companiesPerWorkspace` of its workspace: the company's id is recomputed from its number, and the
 * join (which only supplies the domain) comes after every random draw. Inserted in company id order
 * so that the composite foreign key checks walk the companies index in order (half their time).
 */
async function insertLeads(
  client: Client,
  workspaceIds: string[],
  perWorkspace: number,
  companiesPerWorkspace: number,
  now: Date,
) {
  await client.query(
    `INSERT INTO leads (id, workspace_id, company_id, contact_name, contact_title, contact_email,
       intent_score, intent_level, signal, recommended_action, status, assigned_to_id, created_at)
     SELECT 'ld_' || left(md5(g.ws || ':lead:' || g.n), 20), g.ws, c.id,
       first || ' ' || last, title,
       CASE WHEN has_email THEN ${ascii('first')} || '.' || ${ascii('last')} || '@' || c.domain END,
       score, ${LEVEL('score')}, signal, action, (${arr(LEAD_STATUSES)})[status]::"LeadStatus",
       CASE WHEN assigned THEN 'usr_' || assignee END, created_at
     FROM (
       SELECT ($1::text[])[(i - 1) / $2 + 1] AS ws, (i - 1) % $2 + 1 AS n,
         ${uniform(companiesPerWorkspace)} AS company_n,
         (${arr(FIRST_NAMES)})[${uniform(FIRST_NAMES.length)}] AS first,
         (${arr(LAST_NAMES)})[${uniform(LAST_NAMES.length)}] AS last,
         (${arr(TITLES.flat())})[${uniform(TITLES.flat().length)}] AS title,
         random() < 0.7 AS has_email,
         ${SKEWED_SCORE} AS score,
         (${arr(SIGNALS)})[${uniform(SIGNALS.length)}] AS signal,
         (${arr(ACTIONS)})[${uniform(ACTIONS.length)}] AS action,
         ${weighted(LEAD_STATUS_WEIGHTS)} AS status,
         random() < 0.4 AS assigned,
         ${uniform(25)} AS assignee,
         date_trunc('milliseconds', $3::timestamptz - interval '365 days' * random() ^ 2) AS created_at
       FROM generate_series(1, $2 * cardinality($1::text[])) AS i
     ) g
     JOIN companies c ON c.id = ${companyId('g.ws', 'g.company_n')}
     ORDER BY c.id, g.n`,
    [workspaceIds, perWorkspace, now],
  );
}

// The site's pages: path, title, weight as a landing page, weight as a later page of a visit
// (index-aligned). Weighted so that, in the default 30-day window of `visitedPage`, about 40 % of
// the large workspace's companies viewed `/` and about 1 % `/pricing/enterprise`: the two ends of
// workload (vp).
const PAGES: [string, string, number, number][] = [
  ['/', 'Example: know who visits your website', 30, 3],
  ['/pricing', 'Pricing', 8, 14],
  ['/pricing/enterprise', 'Enterprise pricing', 0, 0.3],
  ['/product', 'Product tour', 10, 12],
  ['/product/integrations', 'Integrations: CRM, Slack and more', 4, 9],
  ['/customers', 'Customer stories', 5, 8],
  ['/demo', 'Book a demo', 3, 6],
  ['/about', 'About us', 3, 4],
  ['/careers', 'Careers', 4, 3],
  ['/docs/api', 'API reference', 5, 8],
  ['/blog/intent-data-explained', 'Intent data, explained', 6, 7],
  ['/blog/account-based-marketing-playbook', 'The account-based marketing playbook', 6, 7],
  ['/blog/gdpr-and-b2b-tracking', 'GDPR and B2B tracking', 5, 6],
  ['/blog/lead-scoring-101', 'Lead scoring 101', 5, 6],
  ['/blog/crm-hygiene', 'Five habits of a clean CRM', 6, 7],
];
/** The page of (vp) that about 1 % of the companies viewed in the default window. */
export const RARE_PAGE = '/pricing/enterprise';
// Where visits come from: referrer, source, medium, campaign, term, content (index-aligned with
// the weights; '' is null).
const ORIGINS = [
  ['', '', '', '', '', ''],
  ['https://www.google.com/', 'google', 'organic', '', '', ''],
  ['https://www.linkedin.com/', 'linkedin', 'paid_social', 'q4-abm', '', 'carousel-a'],
  ['', 'newsletter', 'email', 'november-digest', '', ''],
  ['https://news.ycombinator.com/', 'news.ycombinator.com', 'referral', '', '', ''],
  ['https://www.google.com/', 'google', 'cpc', 'brand', 'visitor identification', ''],
];
const ORIGIN_WEIGHTS = [40, 20, 15, 10, 10, 5];
const DEVICES = ['desktop', 'mobile', 'tablet', 'other'];
const DEVICE_WEIGHTS = [70, 25, 4, 1];
// The companies' countries as ISO codes, and one visit in twenty of unknown country.
const COUNTRY_CODES = ['FR', 'DE', 'GB', 'ES', 'IT', 'NL', 'BE', 'US', 'CH', ''];
const VISIT_COUNTRY_WEIGHTS = [...COUNTRY_WEIGHTS.map((w) => w * 0.95), 5];
// A visit's page count, 1 to 8 (mean 3.42).
const PAGE_COUNT_WEIGHTS = [20, 20, 18, 14, 10, 8, 6, 4];
// Visits of up to 393 days ago: within the retention (395) for the whole of a run.
const VISIT_DAYS = 393;
// Visits per insert: bounds the transition tables of the change-tracking triggers.
const VISIT_CHUNK = 1_000_000;

const nullIfEmpty = (sql: string): string => `nullif(${sql}, '')`;

/**
 * Inserts `perWorkspace` visits with their page views into each of `workspaceIds`, each visit on a
 * random company among the `companiesPerWorkspace` of its workspace (its id recomputed from its
 * number: the foreign key checks it). The draws go into a temporary table first, in the order of
 * one series: each visit's start (squared towards the present), origin, device, country, page
 * count, time on page, and its pages, the landing page from one set of weights and the others
 * from another. Visits and page views are then inserted through the real tables, triggers on, a
 * million visits at a time, in start order, as visits arrive.
 */
async function insertVisits(
  client: Client,
  workspaceIds: string[],
  perWorkspace: number,
  companiesPerWorkspace: number,
  now: Date,
  log: (line: string) => void,
): Promise<void> {
  const paths = arr(PAGES.map(([path]) => path));
  const titles = arr(PAGES.map(([, title]) => title));
  await client.query(
    `CREATE TEMP TABLE bench_visits ON COMMIT DROP AS
     SELECT i, ws, 'vi_' || left(md5(ws || ':visit:' || n), 20) AS id,
       ${companyId('ws', 'company_n')} AS company_id, started_at, pages, gap, origin, device,
       country,
       ARRAY(SELECT CASE WHEN k = 1 THEN ${weighted(PAGES.map(([, , landing]) => landing))}
           ELSE ${weighted(PAGES.map(([, , , later]) => later))} END
         FROM generate_series(1, pages) AS k) AS page_list
     FROM (
       SELECT i, ($1::text[])[(i - 1) / $2 + 1] AS ws, (i - 1) % $2 + 1 AS n,
         ${uniform(companiesPerWorkspace)} AS company_n,
         date_trunc('milliseconds',
           $3::timestamptz - interval '1 hour' - interval '${VISIT_DAYS} days' * random() ^ 2)
           AS started_at,
         ${weighted(PAGE_COUNT_WEIGHTS)} AS pages,
         10 + floor(random() * 170)::int AS gap,
         ${weighted(ORIGIN_WEIGHTS)} AS origin,
         ${weighted(DEVICE_WEIGHTS)} AS device,
         ${weighted(VISIT_COUNTRY_WEIGHTS)} AS country
       FROM generate_series(1, $2 * cardinality($1::text[])) AS i
     ) g`,
    [workspaceIds, perWorkspace, now],
  );
  await client.query('CREATE INDEX ON bench_visits (i)');
  const total = perWorkspace * workspaceIds.length;
  for (let first = 1; first <= total; first += VISIT_CHUNK) {
    const chunk = [first, Math.min(total, first + VISIT_CHUNK - 1)];
    const started = Date.now();
    await client.query(
      `INSERT INTO visits (workspace_id, id, company_id, started_at, ended_at, page_view_count,
         landing_page, referrer, source, medium, campaign, term, content, device_type, country)
       SELECT ws, id, company_id, started_at, started_at + (pages - 1) * gap * interval '1 second',
         pages, (${paths})[page_list[1]],
         ${[1, 2, 3, 4, 5, 6].map((c) => nullIfEmpty(`(${arr2(ORIGINS)})[origin][${c}]`)).join(', ')},
         (${arr(DEVICES)})[device]::"DeviceType", ${nullIfEmpty(`(${arr(COUNTRY_CODES)})[country]`)}
       FROM bench_visits WHERE i BETWEEN $1 AND $2
       ORDER BY started_at, id`,
      chunk,
    );
    await client.query(
      `INSERT INTO page_views (workspace_id, visit_id, visit_started_at, position, company_id,
         hostname, path, title, viewed_at, seconds_on_page)
       SELECT v.ws, v.id, v.started_at, (p.k - 1)::smallint, v.company_id, 'www.example.com',
         (${paths})[p.page], (${titles})[p.page],
         v.started_at + (p.k - 1) * v.gap * interval '1 second',
         CASE WHEN p.k < v.pages THEN v.gap END
       FROM bench_visits v, unnest(v.page_list) WITH ORDINALITY AS p(page, k)
       WHERE v.i BETWEEN $1 AND $2
       ORDER BY v.started_at, v.id, p.k`,
      chunk,
    );
    log(`  visits ${chunk[0]} to ${chunk[1]}: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
  await client.query('DROP TABLE bench_visits');
}

/** What the visit tables hold and weigh on disk (heap, TOAST and indexes of every partition). */
export interface VisitStorage {
  visits: number;
  pageViews: number;
  visitBytes: number;
  pageViewBytes: number;
  /** visit_changes: the feed's one row per visit. */
  changeBytes: number;
}

export async function visitStorage(client: Client): Promise<VisitStorage> {
  const { rows } = await client.query<Record<keyof VisitStorage, string>>(
    `SELECT (SELECT count(*) FROM visits) AS visits,
       (SELECT count(*) FROM page_views) AS "pageViews",
       (SELECT coalesce(sum(pg_total_relation_size(inhrelid)), 0) FROM pg_inherits
         WHERE inhparent = 'visits'::regclass) AS "visitBytes",
       (SELECT coalesce(sum(pg_total_relation_size(inhrelid)), 0) FROM pg_inherits
         WHERE inhparent = 'page_views'::regclass) AS "pageViewBytes",
       pg_total_relation_size('visit_changes') AS "changeBytes"`,
  );
  const row = rows[0];
  return {
    visits: Number(row.visits),
    pageViews: Number(row.pageViews),
    visitBytes: Number(row.visitBytes),
    pageViewBytes: Number(row.pageViewBytes),
    changeBytes: Number(row.changeBytes),
  };
}

/** Fills an empty, migrated database. `now` anchors every date. Logs progress through `log`. */
export async function generateBenchData(
  client: Client,
  scale: BenchScale,
  now: Date,
  log: (line: string) => void,
): Promise<void> {
  const started = Date.now();
  const phase = async (name: string, work: () => Promise<unknown>) => {
    const t = Date.now();
    await work();
    log(`${name}: ${((Date.now() - t) / 1000).toFixed(1)} s`);
  };
  const small = Array.from({ length: scale.smallWorkspaces }, (_, i) => smallWorkspaceId(i + 1));
  const groups = [
    {
      label: 'large',
      ids: [LARGE_WORKSPACE_ID],
      companies: scale.largeCompanies,
      leads: scale.largeLeads,
      visits: scale.largeVisits,
    },
    {
      label: 'small',
      ids: small,
      companies: scale.smallCompanies,
      leads: scale.smallLeads,
      visits: scale.smallVisits,
    },
  ];

  // One transaction: a failed run leaves nothing half-made behind.
  await client.query('BEGIN');
  try {
    // Determinism: a fixed seed, and no parallel plan (workers would draw from their own seeds).
    await client.query('SELECT setseed(0.42)');
    await client.query('SET LOCAL max_parallel_workers_per_gather = 0');
    // Sorts and hash joins of a few million rows in memory rather than in temporary files.
    await client.query("SET LOCAL work_mem = '256MB'");
    // Date arithmetic in UTC: "now minus n days" must not depend on the session's DST rules.
    await client.query("SET LOCAL TIME ZONE 'UTC'");

    await phase('workspaces', () =>
      client.query(
        `INSERT INTO workspaces (id, name, plan, created_at, updated_at)
         SELECT CASE WHEN i = 0 THEN $3 ELSE ($1::text[])[i] END,
           CASE WHEN i = 0 THEN 'Bench Large Corp' ELSE 'Bench Small Co ' || lpad(i::text, 4, '0') END,
           'growth', $2::timestamptz - interval '1100 days', $2::timestamptz
         FROM generate_series(0, cardinality($1::text[])) AS i`,
        [small, now, LARGE_WORKSPACE_ID],
      ),
    );
    for (const g of groups) {
      await phase(`companies (${g.label}, ${g.ids.length * g.companies} rows)`, () =>
        insertCompanies(client, g.ids, g.companies, now),
      );
    }
    const contacts =
      (scale.largeCompanies + scale.smallWorkspaces * scale.smallCompanies) *
      scale.contactsPerCompany;
    await phase(`contacts (${contacts} rows)`, () =>
      insertContacts(client, scale.contactsPerCompany),
    );
    for (const g of groups) {
      await phase(`leads (${g.label}, ${g.ids.length * g.leads} rows)`, () =>
        insertLeads(client, g.ids, g.leads, g.companies, now),
      );
    }
    // Every month of the visits has its partitions (the migration made 13 months back).
    await client.query(
      `SELECT visit_partitions_make($1::timestamptz - interval '${VISIT_DAYS + 2} days', $1)`,
      [now],
    );
    for (const g of groups) {
      await phase(`visits and page views (${g.label}, ${g.ids.length * g.visits} visits)`, () =>
        insertVisits(client, g.ids, g.visits, g.companies, now, log),
      );
    }
    await phase('commit', () => client.query('COMMIT'));
  } catch (err) {
    // The original error is the one worth reporting, even if the connection is gone.
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }

  // Outside the transaction (VACUUM refuses to run in one): fresh statistics for the planner and a
  // visibility map that lets index-only scans skip the table.
  const tables = ['workspaces', 'companies', 'contacts', 'leads'];
  for (const table of [...tables, 'visits', 'page_views', 'visit_changes']) {
    await phase(`vacuum analyze ${table}`, () => client.query(`VACUUM (ANALYZE) ${table}`));
  }
  log(`total: ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

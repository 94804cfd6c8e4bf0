import autocannon from 'autocannon';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, totalmem, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { displayPrefix, generateApiKey, hashApiKey } from '../src/auth/api-key';
import { API_KEY_BY_HASH_SQL } from '../src/auth/api-keys.sql';
import { ChangeCursors } from '../src/changes/change-cursor';
import { COMPANY_CHANGES_SQL, COMPANY_LIST } from '../src/companies/companies.sql';
import type { Environment } from '../src/config/environment';
import { applyMigrations } from '../src/database/migrator';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../src/dev/embedded-postgres';
import { findFreePort } from '../src/dev/free-port';
import { LEAD_LIST } from '../src/leads/leads.sql';
import { DATA_VERSION_STATEMENT } from '../src/items/item-sql';
import { weakEtag } from '../src/http/conditional-requests';
import type { ListStatements } from '../src/items/list-page';
import { listStatement } from './list-statement';
import {
  FULL_SCALE,
  generateBenchData,
  LARGE_WORKSPACE_ID,
  SMOKE_SCALE,
  smallWorkspaceId,
  type BenchScale,
} from './data';
import {
  checkFeedPages,
  companyFeedPosition,
  feedSync,
  measureImports,
  offsetSync,
  type FeedPosition,
} from './feeds';
import { cpuSeconds, measureLevels } from './compression';
import { renderReport, type Measurement, type Report, type ServerName } from './report';
import { measureWebhooks } from './webhooks';
import { measureFairQueueCost } from './fair-queue-cost';
import { measureNoisyNeighbour } from './noisy-neighbour';

/**
 * `npm run bench`: the service against the bare limit and the naive implementation, on the same
 * data, one server after another, and pgbench running the service's SQL as the ceiling.
 * `npm run bench -- --smoke`: the same on small data for a second per workload (CI), checking
 * only that everything runs and answers alike. Environment:
 * - BENCH_DATABASE_URL: a server and a database whose name contains "bench"; it is dropped and
 *   recreated. Default: the local PostgreSQL on 5432 if it answers, else an embedded one.
 * - BENCH_SECONDS (each measured period), BENCH_CONNECTIONS; BENCH_WORKLOADS=a,e to run only
 *   those (the report then goes to the temporary directory); h is the full sync through the feed
 *   and by offsets, i the imports with change tracking on and off.
 * - --reuse-data: keep the data of a previous run of the same scale (while iterating).
 */
const ROOT = join(__dirname, '..', '..');
const smoke = process.argv.includes('--smoke');
const reuseData = process.argv.includes('--reuse-data');
const scale: BenchScale = smoke ? SMOKE_SCALE : FULL_SCALE;
const seconds = Number(process.env.BENCH_SECONDS ?? (smoke ? 1 : 10));
const warmupSeconds = smoke ? 0.5 : 2;
const connections = Number(process.env.BENCH_CONNECTIONS ?? 10);
const secret = randomBytes(32).toString('base64url');
// Signs cursors at any position of the feeds, as the servers (given the same secret) do.
const cursors = new ChangeCursors({ API_KEY_SECRET: secret } as Environment);
// Changes per feed page (the feed's maximum), and items per page of the offset sync (the list's).
const FEED_LIMIT = 1000;
const LIST_LIMIT = 200;
// Companies (with their contacts) per import of workload i, and pairs of imports, on and off.
const IMPORT = smoke ? { companies: 1_000, rounds: 1 } : { companies: 10_000, rounds: 5 };
// (w) Changes committed per second while webhooks are measured: above the 500 events/s target.
const WEBHOOK_RATE = 600;
// Every date of the data and of the `since` filters is relative to this instant.
const now = new Date();

interface Request {
  path: string;
  key: string;
  /** A JSON body, POSTed (the MCP endpoint); none: a GET. */
  body?: string;
}

type SqlValue = string | number | Date | string[] | null | undefined;

interface Workload {
  id: string;
  title: string;
  requests: Request[];
  /** Concurrent connections, when not the run's. */
  connections?: number;
  /** The servers measured, when not all. */
  servers?: ServerName[];
  /** Request headers besides the key's. */
  headers?: Record<string, string>;
  /** The status every answer must have, when not 200. */
  expectedStatus?: number;
  /** The SQL statements of one such request, with their parameters, for pgbench. */
  statements: (request: Request) => [string, SqlValue[]][];
}

function log(line: string): void {
  console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}`);
}

async function main(): Promise<void> {
  const database = await openDatabase();
  try {
    const generation = await prepareData(database.url);
    const keys = await createKeys(database.url);
    // BENCH_WORKLOADS=a,e runs only those (while iterating; a committed report has them all).
    const only = process.env.BENCH_WORKLOADS?.split(',');
    const selected = (id: string) => !only || only.includes(id);
    const feedPages = (await locateFeedPages(database.url)).filter(({ id }) => selected(id));
    const revalidated = await revalidatedPage(database.url);
    const workloads = defineWorkloads(keys, feedPages, revalidated).filter(({ id }) =>
      selected(id),
    );
    const largeKey = keys.get(LARGE_WORKSPACE_ID) ?? '';
    const report: Report = {
      smoke,
      scale,
      seconds,
      connections,
      generation,
      machine: await describeMachine(database.url),
      startup: {},
      workloads: workloads.map(({ id, title }) => ({ id, title })),
      measurements: [],
      ceiling: [],
    };
    const servers = new Map<ServerName, RunningServer>();
    try {
      const samples = new Map<ServerName, (string | null)[]>();
      for (const name of STARTED) {
        const running = await startServer(name, database.url);
        servers.set(name, running);
        report.startup[name] = running.startupMs;
        log(`${name}: ready in ${running.startupMs.toFixed(0)} ms`);
        samples.set(name, await fetchSamples(running, workloads));
      }
      checkSameAnswers(samples);
      if (selected('b-br')) report.compressionLevels = await levelsOnAPage(servers, keys);
      const serviceUrl = `http://127.0.0.1:${servers.get('service')?.port}`;
      await checkFeedPages(
        serviceUrl,
        largeKey,
        feedPages.map((page) => ({ ...page, path: feedPath(page.after), size: FEED_LIMIT })),
      );
      for (const workload of workloads) {
        const runs = new Map<ServerName, LoadResult[]>();
        for (const name of ORDER) {
          const running = servers.get(name);
          if (!running || !(workload.servers ?? SERVERS).includes(name)) continue;
          runs.set(name, [...(runs.get(name) ?? []), await measure(running, workload)]);
        }
        for (const [name, results] of runs) {
          const measurement = summarize(name, workload.id, results);
          report.measurements.push(measurement);
          log(
            `${name} ${workload.id}: ${measurement.rps.toFixed(0)} req/s, p50 ` +
              `${measurement.p50.toFixed(2)} ms, p99 ${measurement.p99.toFixed(2)} ms, ` +
              `RSS ${measurement.peakRssMb.toFixed(0)} MB, failures ${measurement.failures}`,
          );
        }
      }
      if (selected('h')) report.sync = await measureSync(serviceUrl, largeKey);
      if (selected('n')) {
        const service = servers.get('service');
        if (!service) throw new Error('the service is not running');
        // The quiet workspace: a small one; the noisy one: another small one's key ten times over
        // (each key of a workspace shares its in-flight limit), on its first page of 200.
        const small = (i: number) => keys.get(smallWorkspaceId(i)) ?? '';
        report.noisyNeighbour = await measureNoisyNeighbour({
          port: service.port,
          quiet: { path: '/v1/companies?limit=50', key: small(1) },
          noisy: {
            path: `/v1/companies?limit=${LIST_LIMIT}`,
            keys: await extraKeys(database.url, smallWorkspaceId(2), 10),
          },
          inFlightLimit: 20,
          seconds,
          waveSize: 300,
          residentMb: () => residentMb(service.child.pid),
          serviceCpuSeconds: () => cpuSeconds(service.child.pid),
          log,
        });
      }
      if (selected('w')) {
        const servicePort = servers.get('service')?.port ?? 0;
        const pageOne = defineWorkloads(keys, feedPages, revalidated).find(({ id }) => id === 'a');
        if (!pageOne) throw new Error('workload (a) is not defined');
        report.webhooks = await measureWebhooks({
          databaseUrl: database.url,
          workerMain: join(ROOT, 'dist', 'worker', 'main.js'),
          targetRate: WEBHOOK_RATE,
          seconds,
          backlog: smoke ? 1_000 : 10_000,
          serve: async (duration) => {
            const { latencies } = await load(servicePort, pageOne, duration);
            latencies.sort((a, b) => a - b);
            const p99 = latencies[Math.floor(latencies.length * 0.99)] ?? NaN;
            return { rps: latencies.length / duration, p99 };
          },
          log,
        });
      }
    } finally {
      for (const running of servers.values()) await stopServer(running);
    }
    report.ceiling = runPgbench(database.url, workloads);
    if (selected('q')) {
      report.fairQueueCost = await measureFairQueueCost();
      log(`fair queue: ${JSON.stringify(report.fairQueueCost)} ns of CPU per statement`);
    }
    if (selected('i')) {
      log(
        `imports of ${IMPORT.companies} companies, ${IMPORT.rounds} each with change tracking ` +
          'on and off',
      );
      report.imports = await withClient(database.url, (client) =>
        measureImports(
          client,
          { DATABASE_URL: database.url, API_KEY_SECRET: secret },
          { workspaceId: LARGE_WORKSPACE_ID, ...IMPORT },
          log,
        ),
      );
    }
    const output =
      smoke || only
        ? join(tmpdir(), `benchmarks-${smoke ? 'smoke' : 'partial'}.md`)
        : join(ROOT, 'docs', 'benchmarks.md');
    writeReport(output, renderReport(report));
    log(`report written to ${output}`);
    const failed = report.measurements.filter((m) => m.failures > 0 && m.server !== 'naive');
    if (failed.length > 0) {
      throw new Error(
        `requests failed: ${failed.map((m) => `${m.server} ${m.workload}`).join(', ')}`,
      );
    }
    const noOp = report.imports?.noOp;
    if (noOp && noOp.companyChanges + noOp.leadChanges !== 0) {
      throw new Error(
        `the no-op re-import emitted changes: ${noOp.companyChanges} in company_changes, ` +
          `${noOp.leadChanges} in lead_changes (expected none)`,
      );
    }
  } finally {
    await database.stop();
  }
}

// ---- the database -------------------------------------------------------------------------------

async function openDatabase(): Promise<{ url: string; stop: () => Promise<void> }> {
  let serverUrl = process.env.BENCH_DATABASE_URL;
  let embedded: EmbeddedDatabase | undefined;
  if (!serverUrl) {
    const local = 'postgresql://postgres@127.0.0.1:5432/visitor_api_bench';
    if (await answers(local.replace(/[^/]+$/, 'postgres'))) {
      serverUrl = local;
    } else {
      log('no PostgreSQL on 127.0.0.1:5432: starting an embedded one');
      embedded = await startEmbeddedPostgres('bench-postgres');
      serverUrl = embedded.url.replace(/[^/]+$/, 'visitor_api_bench');
    }
  }
  const url = new URL(serverUrl);
  const name = decodeURIComponent(url.pathname.slice(1)) + (smoke ? '_smoke' : '');
  if (!name.includes('bench')) throw new Error('the benchmark database name must contain "bench"');
  url.pathname = `/${name}`;
  return { url: url.toString(), stop: async () => embedded?.stop() };
}

async function answers(url: string): Promise<boolean> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function withClient<T>(url: string, run: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/** Migrates a fresh database and fills it; returns the seconds the data took. */
async function prepareData(url: string): Promise<number | undefined> {
  const maintenance = url.replace(/\/[^/]*$/, '/postgres');
  const name = new URL(url).pathname.slice(1);
  if (reuseData && (await answers(url))) {
    const filled = await withClient(url, async (client) => {
      const { rows } = await client.query<{ n: string }>(
        'SELECT count(*) AS n FROM companies WHERE workspace_id = $1',
        [LARGE_WORKSPACE_ID],
      );
      return Number(rows[0].n) === scale.largeCompanies;
    }).catch(() => false);
    if (filled) {
      log(`reusing the data of ${name}`);
      return undefined;
    }
  }
  await withClient(maintenance, async (client) => {
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await client.query(`CREATE DATABASE "${name}"`);
  });
  await applyMigrations({
    databaseUrl: url,
    migrationsDir: join(ROOT, 'prisma', 'migrations'),
    log: () => undefined,
  });
  const started = performance.now();
  await withClient(url, async (client) => {
    await generateBenchData(client, scale, now, log);
    // The generator vacuums the tables it fills; the triggers filled these. Without statistics
    // (autovacuum is off on our CI machines) the feed's first page is planned as a scan of the
    // whole workspace and a sort: about 1 s instead of 50 ms (docs/benchmarks.md).
    await client.query(
      'VACUUM (ANALYZE) company_day_counts, lead_day_counts, company_changes, lead_changes',
    );
  });
  const elapsed = (performance.now() - started) / 1000;
  log(`data generated in ${elapsed.toFixed(0)} s`);
  return elapsed;
}

/** `count` more keys of one workspace, made as the admin tool makes them. */
async function extraKeys(url: string, workspaceId: string, count: number): Promise<string[]> {
  const made = Array.from({ length: count }, () => generateApiKey());
  await withClient(url, (client) =>
    client.query(
      `INSERT INTO api_keys (id, workspace_id, name, prefix, hash)
       SELECT gen_random_uuid()::text, $1, 'noisy', prefix, hash
       FROM unnest($2::text[], $3::text[]) AS k(prefix, hash)`,
      [workspaceId, made.map(displayPrefix), made.map((key) => hashApiKey(key, secret))],
    ),
  );
  return made;
}

/** One key per workspace, made as the admin tool makes them (hash under the run's secret). */
async function createKeys(url: string): Promise<Map<string, string>> {
  return withClient(url, async (client) => {
    const { rows } = await client.query<{ id: string }>('SELECT id FROM workspaces ORDER BY id');
    const keys = new Map(rows.map(({ id }) => [id, generateApiKey()]));
    await client.query('DELETE FROM api_keys');
    await client.query(
      `INSERT INTO api_keys (id, workspace_id, name, prefix, hash)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[])`,
      [
        [...keys.keys()].map(() => randomUUID()),
        [...keys.keys()],
        [...keys.keys()].map(() => 'benchmark'),
        [...keys.values()].map(displayPrefix),
        [...keys.values()].map((key) => hashApiKey(key, secret)),
      ],
    );
    await client.query('VACUUM ANALYZE api_keys');
    return keys;
  });
}

// ---- the workloads ------------------------------------------------------------------------------

/** A feed page of workloads g1-g3: after which change it starts, and what it must hold. */
interface FeedPageCase {
  id: string;
  title: string;
  /** The cursor's position; none for the first page. */
  after?: FeedPosition;
  firstId: string;
  hasMore: boolean;
}

/** The first page, the page after the middle change and the last full page of the large feed. */
async function locateFeedPages(url: string): Promise<FeedPageCase[]> {
  const n = scale.largeCompanies;
  const count = (i: number) => i.toLocaleString('en');
  return withClient(url, async (client) => {
    const at = (i: number) => companyFeedPosition(client, LARGE_WORKSPACE_ID, i);
    return [
      { id: 'g1', title: 'the first page (no cursor)', firstId: (await at(1)).id, hasMore: true },
      {
        id: 'g2',
        title: `a middle page (cursor at the ${count(n / 2)}th change)`,
        after: await at(n / 2),
        firstId: (await at(n / 2 + 1)).id,
        hasMore: true,
      },
      {
        id: 'g3',
        title: `the last page (cursor at the ${count(n - FEED_LIMIT)}th change of ${count(n)})`,
        after: await at(n - FEED_LIMIT),
        firstId: (await at(n - FEED_LIMIT + 1)).id,
        hasMore: false,
      },
    ];
  });
}

/** The request of a page of the large workspace's companies feed after a position. */
function feedPath(after: FeedPosition | undefined): string {
  const query = new URLSearchParams({ limit: String(FEED_LIMIT) });
  if (after) query.set('cursor', cursors.encode('companies', LARGE_WORKSPACE_ID, after));
  return `/v1/companies/changes?${query.toString()}`;
}

/** The page of workloads r and r304, with the ETag the service gives it (its data version's). */
const REVALIDATED_PATH = '/v1/companies?limit=200';

async function revalidatedPage(url: string): Promise<{ path: string; etag: string }> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const workspace = smallWorkspaceId(1);
    const { rows } = await client.query<{ version: string }>(DATA_VERSION_STATEMENT, [workspace]);
    const etag = weakEtag(workspace, REVALIDATED_PATH, `version:${rows[0].version}`);
    return { path: REVALIDATED_PATH, etag };
  } finally {
    await client.end();
  }
}

function defineWorkloads(
  keys: Map<string, string>,
  feedPages: FeedPageCase[],
  revalidated: { path: string; etag: string },
): Workload[] {
  const keyOf = (workspace: string): string => {
    const key = keys.get(workspace);
    if (!key) throw new Error(`no key for ${workspace}`);
    return key;
  };
  const small = Array.from({ length: scale.smallWorkspaces }, (_, i) => smallWorkspaceId(i + 1));
  const large = keyOf(LARGE_WORKSPACE_ID);
  const hashOf = (key: string) => hashApiKey(key, secret);
  const workspaceOfKey = new Map([...keys].map(([workspace, key]) => [key, workspace]));
  // A list request's statements: the key lookup, then the list's one statement.
  const list =
    (statements: ListStatements) =>
    ({ path, key }: Request): [string, SqlValue[]][] => {
      const query = new URL(path, 'http://bench').searchParams;
      const [sql, values] = listStatement(statements, workspaceOfKey.get(key) ?? '', query);
      return [
        [API_KEY_BY_HASH_SQL, [hashOf(key)]],
        [sql, values],
      ];
    };
  const companies = list(COMPANY_LIST);
  // A feed page's statements: the key lookup, then the feed's one statement after the position
  // (none: from the start), with the position's pass (null: this read starts it).
  const feed = (after: FeedPosition | undefined) => (): [string, SqlValue[]][] => [
    [API_KEY_BY_HASH_SQL, [hashOf(large)]],
    [
      COMPANY_CHANGES_SQL,
      [LARGE_WORKSPACE_ID, after?.txid ?? '0', after?.id ?? '', FEED_LIMIT, after?.pass ?? null],
    ],
  ];
  const sync: Request[] = [];
  for (const workspace of small) {
    for (let offset = 0; offset < scale.smallCompanies; offset += 200) {
      sync.push({ path: `/v1/companies?limit=200&offset=${offset}`, key: keyOf(workspace) });
    }
  }
  const ago = (hours: number) => new Date(now.getTime() - hours * 3_600_000).toISOString();
  return [
    {
      id: 'a',
      title: 'page one of companies, limit=50, random small workspaces',
      requests: small.map((w) => ({ path: '/v1/companies?limit=50', key: keyOf(w) })),
      statements: companies,
    },
    {
      id: 'b',
      title: 'full sync of small workspaces: every offset, limit=200',
      requests: sync,
      statements: companies,
    },
    {
      // (b) compressed: the service only (the others do not compress), no pgbench (the same SQL).
      id: 'b-br',
      title: 'workload (b) asking for compression: Accept-Encoding: gzip, br (br sent)',
      requests: sync,
      headers: { 'accept-encoding': 'gzip, br' },
      servers: ['service'],
      statements: () => [],
    },
    // One offset per workload: a mix of a slow and a fast page has no meaningful median.
    ...(
      [
        ['c', 'the middle deep page of the large workspace', scale.largeCompanies / 2, undefined],
        ['c2', 'the last page of the large workspace', scale.largeCompanies - 200, undefined],
        ['c1', 'the middle deep page, one client (a sync job alone)', scale.largeCompanies / 2, 1],
      ] as const
    ).map(([id, title, offset, clients]) => ({
      id,
      title: `${title} (offset ${offset}, limit=200)`,
      requests: [{ path: `/v1/companies?limit=200&offset=${offset}`, key: large }],
      connections: clients,
      statements: companies,
    })),
    // Service and bare only: the naive server replaces the companies service by its list alone.
    ...feedPages.map(({ id, title, after }) => ({
      id,
      title: `companies feed of the large workspace, ${title}, limit=${FEED_LIMIT}, one client`,
      requests: [{ path: feedPath(after), key: large }],
      connections: 1,
      servers: ['service', 'bare'] satisfies ServerName[],
      statements: feed(after),
    })),
    {
      id: 'd0',
      title: 'page one of the large workspace, limit=50, no filter',
      requests: [{ path: '/v1/companies?limit=50', key: large }],
      statements: companies,
    },
    {
      id: 'd',
      title: 'since filters on the large workspace (1 h, 1 day, 7, 30, 365 days), limit=50',
      requests: [1, 24, 24 * 7, 24 * 30, 24 * 365].map((hours) => ({
        path: `/v1/companies?limit=50&since=${encodeURIComponent(ago(hours))}`,
        key: large,
      })),
      statements: companies,
    },
    // Filters on the large workspace (docs/api.md, "Filters"): the naive server has none.
    // `crmStatus=new` matches about 45 % of the companies; "hot, not yet in the CRM" about 10 %.
    ...(
      [
        [
          'k',
          'hot companies not yet in the CRM, page one',
          'intentLevel=hot&crmStatus=new,qualified&limit=50',
        ],
        ['k1', 'one country above a score, page one', 'country=France&minIntentScore=40&limit=50'],
        [
          'k2',
          'the middle deep page of crmStatus=new (45 % of the companies)',
          `crmStatus=new&limit=200&offset=${Math.round(scale.largeCompanies * 0.45 * 0.5)}`,
        ],
        [
          'k3',
          'crmStatus=new, since 30 days, page one',
          `crmStatus=new&since=${encodeURIComponent(ago(24 * 30))}&limit=50`,
        ],
      ] as const
    ).map(([id, title, query]) => ({
      id,
      title: `${title} (${decodeURIComponent(query)})`,
      requests: [{ path: `/v1/companies?${query}`, key: large }],
      // With `since`, a filtered total counts the matching rows (docs/api.md, "Filters"): one
      // client, like (c1); ten counting at once would mostly measure the two cores' queue.
      connections: query.includes('since=') ? 1 : undefined,
      servers: ['service', 'bare'] satisfies ServerName[],
      statements: companies,
    })),
    // A 200-item page, then the same asked with its ETag (docs/api.md, "Conditional requests"):
    // the 304 reads the data version alone, not the page.
    {
      id: 'r',
      title: `a 200-item page of one small workspace (${revalidated.path}), the baseline of r304`,
      requests: [{ path: revalidated.path, key: keyOf(smallWorkspaceId(1)) }],
      servers: ['service'],
      statements: companies,
    },
    {
      id: 'r304',
      title: 'the same page with If-None-Match: its ETag (answered 304, no body)',
      requests: [{ path: revalidated.path, key: keyOf(smallWorkspaceId(1)) }],
      headers: { 'if-none-match': revalidated.etag },
      servers: ['service'],
      statements: ({ key }) => [
        [API_KEY_BY_HASH_SQL, [hashOf(key)]],
        [DATA_VERSION_STATEMENT, [smallWorkspaceId(1)]],
      ],
      expectedStatus: 304,
    },
    // The MCP endpoint (docs/agents.md) beside the REST list it wraps, the same pages: the cost
    // of the protocol (a server per request, JSON-RPC, the text block) as a ratio of the two.
    {
      id: 'm0',
      title: 'page one of companies, limit=20, random small workspaces (the baseline of m)',
      requests: small.map((w) => ({ path: '/v1/companies?limit=20', key: keyOf(w) })),
      servers: ['service'],
      statements: companies,
    },
    {
      id: 'm',
      title: 'MCP tools/call list_companies {limit: 20}, random small workspaces',
      requests: small.map((w) => ({
        path: '/mcp',
        key: keyOf(w),
        body: toolCall('list_companies', { limit: 20 }),
      })),
      servers: ['service'],
      statements: () => [],
    },
    {
      // Not a workload of the issue: the cost of the framework alone, with no database and no
      // key (the bare server answers any /health path).
      id: 'z',
      title: 'the framework alone: GET /health/live (no key, no database)',
      requests: [{ path: '/health/live', key: large }],
      servers: WITH_METRICS,
      statements: () => [],
    },
    {
      id: 'e',
      title: 'GET /v1/me, random keys',
      requests: [...keys.values()].map((key) => ({ path: '/v1/me', key })),
      servers: WITH_METRICS,
      statements: (request) => [[API_KEY_BY_HASH_SQL, [hashOf(request.key)]]],
    },
    {
      id: 'f',
      title: 'page one of leads, limit=50, random small workspaces',
      requests: small.map((w) => ({ path: '/v1/leads?limit=50', key: keyOf(w) })),
      statements: list(LEAD_LIST),
    },
  ];
}

// ---- the full sync ------------------------------------------------------------------------------

/**
 * A new client's full initial sync of the large workspace, one request at a time: through the
 * feed, then by offsets on the list. Each pass must see every company.
 */
async function measureSync(service: string, key: string): Promise<NonNullable<Report['sync']>> {
  const feed = await feedSync(service, key, FEED_LIMIT);
  log(`sync through the feed: ${feed.requests} pages, ${feed.seconds.toFixed(1)} s`);
  const offset = await offsetSync(service, key, LIST_LIMIT);
  log(`sync by offsets: ${offset.requests} pages, ${offset.seconds.toFixed(1)} s`);
  for (const [name, pass] of [
    ['feed', feed],
    ['offset', offset],
  ] as const) {
    if (pass.distinct !== scale.largeCompanies) {
      throw new Error(
        `the ${name} sync saw ${pass.distinct} distinct companies, not ${scale.largeCompanies}`,
      );
    }
  }
  return { feedLimit: FEED_LIMIT, offsetLimit: LIST_LIMIT, feed, offset };
}

// ---- the servers --------------------------------------------------------------------------------

interface RunningServer {
  name: ServerName;
  child: ChildProcess;
  port: number;
  startupMs: number;
}

// The service and the naive variant start as production starts the service: `npm run start:prod`'s
// node flags (heap bounds), without npm in between.
const PRODUCTION_FLAGS = productionNodeFlags();
const SERVERS: ServerName[] = ['service', 'bare', 'naive'];
// The service again with METRICS_PORT set, measured on the workloads that say so (e and z, where
// a fixed cost per request shows most) against the service without it, to price the metrics.
const WITH_METRICS: ServerName[] = [...SERVERS, 'metrics'];
const STARTED = WITH_METRICS;
// Per workload, the service and the bare server twice, in mirrored order, so that the machine's
// drift during a workload weighs on both alike (the service with metrics likewise beside the
// service); the naive one once, in the middle. A smoke run only checks that everything runs: each
// server once.
const ORDER: ServerName[] = smoke
  ? STARTED
  : ['service', 'metrics', 'bare', 'naive', 'bare', 'metrics', 'service'];
const COMMAND: Record<ServerName, string[]> = {
  service: [...PRODUCTION_FLAGS, join(ROOT, 'dist', 'main.js')],
  metrics: [...PRODUCTION_FLAGS, join(ROOT, 'dist', 'main.js')],
  bare: [join(__dirname, 'bare-server.js')],
  naive: [...PRODUCTION_FLAGS, join(__dirname, 'naive-server.js')],
};

function productionNodeFlags(): string[] {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const [node, ...rest] = manifest.scripts['start:prod'].split(/\s+/);
  if (node !== 'node' || rest.at(-1) !== 'dist/main.js') {
    throw new Error('start:prod is expected to be `node [flags] dist/main.js`');
  }
  return rest.slice(0, -1);
}

async function startServer(name: ServerName, databaseUrl: string): Promise<RunningServer> {
  const port = await findFreePort();
  const metricsPort = name === 'metrics' ? await findFreePort() : undefined;
  const errors = openSync(join(tmpdir(), `bench-${name}.err.log`), 'w');
  const started = performance.now();
  const child = spawn(process.execPath, COMMAND[name], {
    cwd: ROOT,
    // Production settings; the rate limit is raised so that the load is not refused, and the
    // request log (one JSON line per request, as in production) goes to /dev/null.
    env: {
      PATH: process.env.PATH,
      NODE_ENV: 'production',
      DATABASE_URL: databaseUrl,
      API_KEY_SECRET: secret,
      PORT: String(port),
      RATE_LIMIT_PER_MINUTE: '1000000000',
      LOG_LEVEL: 'info',
      ...(metricsPort && { METRICS_PORT: String(metricsPort) }),
    },
    stdio: ['ignore', openSync('/dev/null', 'w'), errors],
  });
  const ready = '/health/ready';
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`${name} exited; see ${tmpdir()}/bench-${name}.err.log`);
    const status = await fetch(`http://127.0.0.1:${port}${ready}`).then(
      (response) => response.status,
      () => 0,
    );
    if (status === 200) break;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  if (metricsPort && (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).status !== 200) {
    throw new Error(`${name} does not serve /metrics on METRICS_PORT`);
  }
  return { name, child, port, startupMs: performance.now() - started };
}

async function stopServer({ child }: RunningServer): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

function residentMb(pid: number | undefined): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}

interface LoadResult {
  latencies: number[];
  seconds: number;
  failures: number;
  peakRssMb: number;
  /** Bytes received, headers included, and the server's CPU seconds, over the period. */
  bytes: number;
  cpuSeconds: number;
}

/** A warm-up, then `seconds` of load, with the server's resident memory sampled meanwhile. */
async function measure({ child, port }: RunningServer, workload: Workload): Promise<LoadResult> {
  await load(port, workload, warmupSeconds);
  let peakRssMb = residentMb(child.pid);
  const sampler = setInterval(() => (peakRssMb = Math.max(peakRssMb, residentMb(child.pid))), 50);
  try {
    const cpuBefore = cpuSeconds(child.pid);
    const result = await load(port, workload, seconds);
    return { ...result, seconds, peakRssMb, cpuSeconds: cpuSeconds(child.pid) - cpuBefore };
  } finally {
    clearInterval(sampler);
  }
}

function summarize(server: ServerName, workload: string, results: LoadResult[]): Measurement {
  const latencies = results.flatMap((result) => result.latencies).sort((a, b) => a - b);
  const at = (q: number) =>
    latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
  const total = (pick: (result: LoadResult) => number) =>
    results.reduce((sum, result) => sum + pick(result), 0);
  return {
    server,
    workload,
    rps: latencies.length / total((result) => result.seconds),
    p50: at(0.5),
    p99: at(0.99),
    failures: total((result) => result.failures),
    peakRssMb: Math.max(...results.map((result) => result.peakRssMb)),
    cpuMsPerRequest: (1000 * total((result) => result.cpuSeconds)) / latencies.length,
    bytesPerResponse: total((result) => result.bytes) / latencies.length,
  };
}

/** Closed-loop load on random requests of the workload; the latency of every response. */
async function load(
  port: number,
  workload: Workload,
  duration: number,
): Promise<{ latencies: number[]; failures: number; bytes: number }> {
  const latencies: number[] = [];
  let failures = 0;
  let bytes = 0;
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const options: autocannon.Options = {
      url: `http://127.0.0.1:${port}`,
      connections: workload.connections ?? connections,
      duration,
      requests: [
        {
          setupRequest: (request) => {
            const { path, key, body } = workload.requests[randomIndex(workload.requests.length)];
            const post = body === undefined ? {} : { method: 'POST' as const, body };
            const json = body === undefined ? {} : MCP_HEADERS;
            return {
              ...request,
              ...post,
              path,
              headers: { authorization: `Bearer ${key}`, ...json, ...workload.headers },
            };
          },
        },
      ],
    };
    const instance = autocannon(options, (error: unknown, done) =>
      error
        ? reject(error instanceof Error ? error : new Error('autocannon failed'))
        : resolve(done),
    );
    instance.on('response', (_client, statusCode, responseBytes, responseTime) => {
      latencies.push(responseTime);
      bytes += responseBytes;
      if (statusCode !== (workload.expectedStatus ?? 200)) failures += 1;
    });
  });
  return { latencies, failures: failures + result.errors + result.timeouts, bytes };
}

// What an MCP client sends with each POST (Streamable HTTP).
const MCP_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
};

/** A `tools/call` as a 2025-era client sends it after its handshake (stateless: none needed). */
function toolCall(name: string, args: Record<string, unknown>): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name, arguments: args },
  });
}

function randomIndex(length: number): number {
  return Math.floor(Math.random() * length);
}

/** The levels of gzip and brotli on workload (b)'s first page, as the service writes it. */
async function levelsOnAPage(
  servers: Map<ServerName, RunningServer>,
  keys: Map<string, string>,
): Promise<Report['compressionLevels']> {
  const response = await fetch(
    `http://127.0.0.1:${servers.get('service')?.port}/v1/companies?limit=200`,
    { headers: { authorization: `Bearer ${keys.get(smallWorkspaceId(1))}` } },
  );
  const levels = measureLevels(Buffer.from(await response.arrayBuffer()), smoke ? 3 : 200);
  const chosen = levels.rows.filter((row) => row.chosen);
  log(
    `compression of a ${levels.bytes}-byte page: ` +
      chosen.map((row) => `${row.coding} ${row.bytes} bytes, ${row.ms.toFixed(2)} ms`).join('; '),
  );
  return levels;
}

/**
 * The first requests of each workload, as each server answers them (null where the server is not
 * measured on the workload): compared after the runs.
 */
async function fetchSamples(
  { name, port }: RunningServer,
  workloads: Workload[],
): Promise<(string | null)[]> {
  const bodies: (string | null)[] = [];
  for (const { requests, servers } of workloads) {
    // The API's answers; health probes are not the same program on both sides.
    for (const { path, key } of requests.filter((r) => r.path.startsWith('/v1/')).slice(0, 3)) {
      if (!(servers ?? SERVERS).includes(name)) {
        bodies.push(null);
        continue;
      }
      const response = await fetch(`http://127.0.0.1:${port}${path}`, {
        headers: { authorization: `Bearer ${key}` },
      });
      const body = await response.text();
      // A feed read without a cursor may start the client's pass at the database's current
      // transaction horizon, which its nextCursor carries and which moves between two reads.
      const firstRead = path.includes('/changes?') && !path.includes('cursor=');
      const comparable = firstRead
        ? body.replace(/"nextCursor":"[^"]*"/, '"nextCursor":"(a first read\'s)"')
        : body;
      bodies.push(`${response.status} ${comparable}`);
    }
  }
  return bodies;
}

/**
 * The bare server must write the service's bytes exactly; the naive one the same JSON values
 * (its own serializer writes numbers its way). A difference is a bug in one of them.
 */
function checkSameAnswers(samples: Map<ServerName, (string | null)[]>): void {
  const service = samples.get('service') ?? [];
  const parse = (sample: string) => JSON.parse(sample.slice(4)) as unknown;
  service.forEach((sample, i) => {
    if (sample === null) return;
    const bare = samples.get('bare')?.[i];
    if (bare !== null && bare !== sample) {
      throw new Error(
        `the bare server's answer differs from the service's: ${sample.slice(0, 200)}`,
      );
    }
    const naive = samples.get('naive')?.[i];
    if (naive !== null && JSON.stringify(parse(naive ?? '')) !== JSON.stringify(parse(sample))) {
      throw new Error(
        `the naive server's answer differs from the service's: ${sample.slice(0, 200)}`,
      );
    }
  });
  const compared = service.filter((sample) => sample !== null).length;
  log(`${compared} sample answers: bare identical byte for byte, naive equal as JSON`);
}

// ---- pgbench ------------------------------------------------------------------------------------

/** A SQL literal for pgbench's simple protocol (its `:name` variables rule out parameters here). */
function literal(value: SqlValue): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'number') return String(value);
  if (value instanceof Date) return `'${value.toISOString()}'`;
  // An array of enumeration values (a filter's): plain words, no quoting needed inside.
  const text = Array.isArray(value) ? `{${value.join(',')}}` : value;
  return `'${text.replaceAll("'", "''")}'`;
}

/**
 * The database alone: pgbench runs each workload's statements, at the same concurrency, with one
 * script per request variant (pgbench picks one at random per transaction; at most 100).
 */
function runPgbench(url: string, workloads: Workload[]): Measurement[] {
  const pgbench = findPgbench();
  if (!pgbench) {
    log('pgbench not found: no ceiling measured');
    return [];
  }
  const results: Measurement[] = [];
  for (const workload of workloads.filter(({ requests }) => requests.length > 0)) {
    if (workload.statements(workload.requests[0]).length === 0) continue;
    const dir = mkdtempSync(join(tmpdir(), `pgbench-${workload.id}-`));
    try {
      const scripts = workload.requests.slice(0, 100).map((request, i) => {
        const file = join(dir, `script-${i}.sql`);
        const text = workload
          .statements(request)
          .map(
            ([sql, values]) =>
              sql.replace(/\$(\d+)/g, (_, n: string) => literal(values[Number(n) - 1])) + ';',
          )
          .join('\n');
        writeFileSync(file, text + '\n');
        return file;
      });
      const clients = workload.connections ?? connections;
      const args = [
        '-n',
        '-M',
        'simple',
        '-c',
        String(clients),
        '-j',
        String(Math.min(2, clients)),
      ];
      args.push('-l', '--log-prefix', join(dir, 'log'), ...scripts.flatMap((f) => ['-f', f]));
      execFileSync(pgbench, [...args, '-T', String(warmupSeconds > 1 ? warmupSeconds : 1), url], {
        stdio: 'ignore',
      });
      for (const file of readdirSync(dir).filter((f) => f.startsWith('log')))
        rmSync(join(dir, file));
      execFileSync(pgbench, [...args, '-T', String(Math.max(1, Math.round(seconds))), url], {
        stdio: 'ignore',
      });
      const latencies = readdirSync(dir)
        .filter((file) => file.startsWith('log'))
        .flatMap((file) => readFileSync(join(dir, file), 'utf8').trim().split('\n'))
        .map((line) => Number(line.split(' ')[2]) / 1000)
        .sort((a, b) => a - b);
      const at = (q: number) => latencies[Math.floor(q * latencies.length)] ?? NaN;
      const measurement: Measurement = {
        server: 'pgbench',
        workload: workload.id,
        rps: latencies.length / Math.max(1, Math.round(seconds)),
        p50: at(0.5),
        p99: at(0.99),
        failures: 0,
        peakRssMb: NaN,
      };
      results.push(measurement);
      log(
        `pgbench ${workload.id}: ${measurement.rps.toFixed(0)} tps, p50 ${measurement.p50.toFixed(2)} ms`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return results;
}

function findPgbench(): string | undefined {
  for (const candidate of ['pgbench', ...globBin()]) {
    try {
      execFileSync(candidate, ['--version'], { stdio: 'ignore' });
      return candidate;
    } catch {
      // not this one
    }
  }
  return undefined;
}

function globBin(): string[] {
  try {
    return readdirSync('/usr/lib/postgresql').map((v) => `/usr/lib/postgresql/${v}/bin/pgbench`);
  } catch {
    return [];
  }
}

// ---- the report ---------------------------------------------------------------------------------

async function describeMachine(url: string): Promise<Report['machine']> {
  const settings = await withClient(url, async (client) => {
    const { rows } = await client.query<{ version: string; buffers: string }>(
      "SELECT current_setting('server_version') AS version, current_setting('shared_buffers') AS buffers",
    );
    return rows[0];
  });
  return {
    cpu: `${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}`,
    memoryGb: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    postgres: `PostgreSQL ${settings.version}, shared_buffers ${settings.buffers}, on the same machine`,
    date: now.toISOString(),
  };
}

/** Replaces the generated part of the report, between its markers, and keeps the rest. */
function writeReport(file: string, generated: string): void {
  const START = '<!-- bench:results:start -->';
  const END = '<!-- bench:results:end -->';
  let current = '';
  try {
    current = readFileSync(file, 'utf8');
  } catch {
    // a new file
  }
  const block = `${START}\n${generated}\n${END}`;
  const start = current.indexOf(START);
  const end = current.indexOf(END);
  const next =
    start >= 0 && end > start
      ? current.slice(0, start) + block + current.slice(end + END.length)
      : `${current}${current ? '\n' : ''}${block}\n`;
  writeFileSync(file, next);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

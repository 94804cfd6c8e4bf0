// The change feeds' numbers beyond the request workloads: a full initial sync through the feed
// against the same sync by offsets (h), and what change tracking costs an import (i).
import { Test } from '@nestjs/testing';
import type { Client } from 'pg';
import { AdminProgram } from '../src/cli/admin-program';
import { CliModule } from '../src/cli/cli.module';
import { COMPANY_PAGE_SQL } from '../src/companies/companies.sql';
import type { CompanyDto } from '../src/companies/dto/company.dto';
import { Environment, validateEnvironment } from '../src/config/environment';
import { ImportService } from '../src/import/import.service';
import { FEED_LIMIT, LIST_LIMIT, log, scale } from './run-settings';
import { median, type Target } from './targets';

/**
 * A position in a feed as a cursor holds it: the change's (txid, id), and `pass`, the xmin of the
 * first read of the client's pass (here: now), which decides whether pruned deletions concern it.
 */
export interface FeedPosition {
  txid: string;
  id: string;
  pass: string;
}

/** The position of the n-th change (1-based) of a workspace's companies feed, in feed order. */
export async function companyFeedPosition(
  client: Client,
  workspaceId: string,
  n: number,
): Promise<FeedPosition> {
  const { rows } = await client.query<FeedPosition>(
    `SELECT txid::text AS txid, id, pg_snapshot_xmin(pg_current_snapshot())::text AS pass
     FROM company_changes WHERE workspace_id = $1
     ORDER BY txid, id OFFSET $2 LIMIT 1`,
    [workspaceId, n - 1],
  );
  if (!rows[0]) throw new Error(`the companies feed of ${workspaceId} has no ${n}th change`);
  return rows[0];
}

interface FeedPage {
  data: { op: 'upsert' | 'delete'; id: string; company?: CompanyDto }[];
  nextCursor: string;
  hasMore: boolean;
}

interface ListPage {
  total: number;
  data: CompanyDto[];
}

/** A GET with the key, parsed; anything but a 200 fails the run. */
async function getJson<T>(url: string, key: string): Promise<T> {
  const response = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
  if (response.status !== 200) {
    throw new Error(`GET ${url}: ${response.status} ${(await response.text()).slice(0, 300)}`);
  }
  return (await response.json()) as T;
}

/**
 * Checks the feed pages of the g workloads before they are measured: each page full, starting at
 * the change right after its cursor's position, and only the last one saying it is the end.
 */
export async function checkFeedPages(
  base: string,
  key: string,
  pages: { path: string; firstId: string; hasMore: boolean; size: number }[],
): Promise<void> {
  for (const { path, firstId, hasMore, size } of pages) {
    const page = await getJson<FeedPage>(`${base}${path}`, key);
    const problem =
      page.data.length !== size
        ? `${page.data.length} changes instead of ${size}`
        : page.hasMore !== hasMore
          ? `hasMore ${page.hasMore}`
          : page.data[0].id !== firstId
            ? `the page starts at ${page.data[0].id}, not at ${firstId}`
            : page.data.some((change) => change.op !== 'upsert' || change.company?.id !== change.id)
              ? 'a change that is not the upsert of its company'
              : undefined;
    if (problem) throw new Error(`feed page ${path}: ${problem}`);
  }
}

export interface SyncPass {
  /** Requests made, the last (short or final) page included. */
  requests: number;
  /** Wall time, first request to last response, the client's JSON parsing included. */
  seconds: number;
  /** Distinct companies received. */
  distinct: number;
}

/**
 * A new client's initial sync through the companies feed: from no cursor, following nextCursor
 * until hasMore is false, one request at a time.
 */
export async function feedSync(base: string, key: string, limit: number): Promise<SyncPass> {
  const ids = new Set<string>();
  let requests = 0;
  let cursor: string | undefined;
  const started = performance.now();
  for (;;) {
    const query = new URLSearchParams({ limit: String(limit), ...(cursor && { cursor }) });
    const page = await getJson<FeedPage>(`${base}/v1/companies/changes?${query.toString()}`, key);
    requests += 1;
    for (const change of page.data) {
      if (change.op !== 'upsert' || change.company?.id !== change.id) {
        throw new Error(`feed sync: unexpected change ${JSON.stringify(change).slice(0, 200)}`);
      }
      ids.add(change.id);
    }
    cursor = page.nextCursor;
    if (!page.hasMore) break;
  }
  return { requests, seconds: (performance.now() - started) / 1000, distinct: ids.size };
}

/** The same sync by the list's recipe: offset 0, limit, 2 × limit, ... until a short page. */
export async function offsetSync(base: string, key: string, limit: number): Promise<SyncPass> {
  const ids = new Set<string>();
  let requests = 0;
  const started = performance.now();
  for (let offset = 0; ; offset += limit) {
    const page = await getJson<ListPage>(
      `${base}/v1/companies?limit=${limit}&offset=${offset}`,
      key,
    );
    requests += 1;
    for (const company of page.data) ids.add(company.id);
    if (page.data.length < limit || offset + limit >= page.total) break;
  }
  return { requests, seconds: (performance.now() - started) / 1000, distinct: ids.size };
}

/** (h) a new client's full sync of the large workspace, through the feed and by offsets. */
export interface SyncRun {
  feedLimit: number;
  offsetLimit: number;
  feed: SyncPass;
  offset: SyncPass;
}

export const SYNC_TARGETS: Target<SyncRun>[] = [
  {
    says: 'full sync through the feed >= 5x faster than offsets',
    figure: ({ feed, offset }) => offset.seconds / feed.seconds,
    atLeast: 5,
    unit: 'x',
  },
];

/**
 * A new client's full initial sync of the large workspace, one request at a time: through the
 * feed, then by offsets on the list. Each pass must see every company.
 */
export async function measureSync(service: string, key: string): Promise<SyncRun> {
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

export interface ImportRuns {
  companies: number;
  contactsPerCompany: number;
  /** Seconds of each measured import, in the order they ran. */
  on: number[];
  off: number[];
  /** The same file imported again into the workspace it was imported into, tracking on. */
  noOp: { seconds: number; companyChanges: number; leadChanges: number };
}

export const IMPORT_TARGETS: Target<ImportRuns>[] = [
  {
    says: 'import with change tracking <= 1.3x without (medians)',
    figure: ({ on, off }) => median(on) / median(off),
    atMost: 1.3,
    unit: 'x',
  },
  {
    says: 'no-op re-import emits 0 changes',
    figure: ({ noOp }) => noOp.companyChanges + noOp.leadChanges,
    atMost: 0,
    unit: '',
  },
];

const IMPORT_WORKSPACE_PREFIX = 'ws_bench_import_';

/**
 * Times ImportService (in the admin tool's Nest modules) importing `companies` companies,
 * with their contacts, into a fresh workspace, with the change-tracking triggers on and off
 * (`ALTER TABLE ... DISABLE TRIGGER` of the *_changes_* triggers only; the day counts stay on).
 * One unmeasured import first (warm-up), then `rounds` pairs, each pair in the other order than
 * the last (on, off, off, on, ...). The companies are the first page of the large workspace's
 * list, in the API's shape, under new ids per import. Then the last tracked import's file is
 * imported again: rows of company_changes and lead_changes written by it are counted (must be
 * none). The import workspaces, their rows and their change records are removed before and after.
 */
export async function measureImports(
  client: Client,
  environment: { DATABASE_URL: string; API_KEY_SECRET: string },
  source: { workspaceId: string; companies: number; rounds: number },
  log: (line: string) => void,
): Promise<ImportRuns> {
  await removeImportWorkspaces(client);
  // The list's statement, whose page size only the API bounds: the companies in the API's shape.
  const { rows } = await client.query<{ body: string }>(COMPANY_PAGE_SQL, [
    source.workspaceId,
    null,
    source.companies,
    0,
  ]);
  const { data: companies } = JSON.parse(rows[0].body) as ListPage;
  if (companies.length !== source.companies) {
    throw new Error(`import source: ${companies.length} companies, not ${source.companies}`);
  }
  const triggers = await changeTriggers(client);
  const settings = validateEnvironment({ ...environment, LOG_LEVEL: 'silent' });
  // Each import in an application of its own, hence on new database sessions, as each run of the
  // admin tool is; only the import itself is timed. (In a session that has run the triggers before,
  // their plans are the ones made at their first run: docs/benchmarks.md, "The change feeds and the
  // stream".) The admin tool's modules, without its command line.
  const timedImport = async (workspaceId: string, file: unknown): Promise<number> => {
    const quiet = { stdout: () => undefined, stderr: () => undefined };
    const module = await Test.createTestingModule({ imports: [CliModule.register(quiet)] })
      .overrideProvider(AdminProgram)
      .useValue({})
      .overrideProvider(Environment)
      .useValue(settings)
      .compile();
    try {
      const started = performance.now();
      await module.get(ImportService).import(workspaceId, file);
      return (performance.now() - started) / 1000;
    } finally {
      await module.close();
    }
  };
  const runs: ImportRuns = {
    companies: companies.length,
    contactsPerCompany: companies[0].contacts.length,
    on: [],
    off: [],
    noOp: { seconds: NaN, companyChanges: NaN, leadChanges: NaN },
  };
  let imports = 0;
  let lastTracked: { workspaceId: string; file: { companies: CompanyDto[] } } | undefined;
  const importOnce = async (tracking: boolean): Promise<number> => {
    const n = imports++;
    const workspaceId = `${IMPORT_WORKSPACE_PREFIX}${String(n).padStart(2, '0')}`;
    await client.query(
      `INSERT INTO workspaces (id, name, plan, created_at, updated_at)
       VALUES ($1, $2, 'growth', now(), now())`,
      [workspaceId, `Bench Import ${n}`],
    );
    const file = { companies: companies.map((company) => renamed(company, `i${n}_`)) };
    await setTracking(client, triggers, tracking);
    const seconds = await timedImport(workspaceId, file);
    await setTracking(client, triggers, true);
    // The triggers were really on or off: one change per company, or none.
    const recorded = await countRows(client, 'company_changes', 'workspace_id = $1', workspaceId);
    if (recorded !== (tracking ? companies.length : 0)) {
      throw new Error(`import with tracking ${tracking ? 'on' : 'off'}: ${recorded} changes`);
    }
    if (tracking) lastTracked = { workspaceId, file };
    return seconds;
  };
  try {
    await importOnce(true);
    for (let round = 0; round < source.rounds; round++) {
      for (const tracking of round % 2 === 0 ? [true, false] : [false, true]) {
        const seconds = await importOnce(tracking);
        (tracking ? runs.on : runs.off).push(seconds);
        log(`import ${tracking ? 'on ' : 'off'}: ${seconds.toFixed(2)} s`);
      }
    }
    if (!lastTracked) throw new Error('no import with tracking on');
    // Every transaction that writes after this one gets a larger txid.
    const { rows: marks } = await client.query<{ txid: string }>(
      'SELECT pg_current_xact_id()::text AS txid',
    );
    runs.noOp.seconds = await timedImport(lastTracked.workspaceId, lastTracked.file);
    const after = 'txid > $1::xid8';
    runs.noOp.companyChanges = await countRows(client, 'company_changes', after, marks[0].txid);
    runs.noOp.leadChanges = await countRows(client, 'lead_changes', after, marks[0].txid);
    log(
      `no-op re-import: ${runs.noOp.seconds.toFixed(2)} s, ${runs.noOp.companyChanges} company ` +
        `and ${runs.noOp.leadChanges} lead changes`,
    );
  } finally {
    await setTracking(client, triggers, true);
    await removeImportWorkspaces(client);
  }
  return runs;
}

/** A company and its contacts under new ids (ids are unique across workspaces). */
function renamed(company: CompanyDto, tag: string): CompanyDto {
  const retag = (id: string) => id.replace(/^([a-z]+_)/, `$1${tag}`);
  return {
    ...company,
    id: retag(company.id),
    contacts: company.contacts.map((contact) => ({ ...contact, id: retag(contact.id) })),
  };
}

/** The change-tracking triggers (migration 20261124000000_change_feeds), by table. */
async function changeTriggers(client: Client): Promise<Map<string, string[]>> {
  const { rows } = await client.query<{ table: string; trigger: string }>(
    `SELECT tgrelid::regclass::text AS table, tgname AS trigger FROM pg_trigger
     WHERE NOT tgisinternal AND tgname LIKE '%\\_changes\\_%'
       AND tgrelid IN ('companies'::regclass, 'contacts'::regclass, 'leads'::regclass)
     ORDER BY 1, 2`,
  );
  const triggers = new Map<string, string[]>();
  for (const { table, trigger } of rows)
    triggers.set(table, [...(triggers.get(table) ?? []), trigger]);
  if (triggers.size !== 3) throw new Error('the change-tracking triggers were not found');
  return triggers;
}

/** Turns the named triggers of each table on or off, a statement per table. */
export async function setTracking(
  client: Client,
  triggers: Map<string, string[]>,
  on: boolean,
): Promise<void> {
  for (const [table, names] of triggers) {
    const action = on ? 'ENABLE' : 'DISABLE';
    await client.query(
      `ALTER TABLE ${table} ${names.map((name) => `${action} TRIGGER "${name}"`).join(', ')}`,
    );
  }
}

export async function countRows(
  client: Client,
  table: string,
  where: string,
  value: string,
): Promise<number> {
  const { rows } = await client.query<{ n: string }>(
    `SELECT count(*) AS n FROM ${table} WHERE ${where}`,
    [value],
  );
  return Number(rows[0].n);
}

/**
 * The import workspaces and all they left. Children first: a cascade from companies would delete
 * contacts one company at a time, and run their statement triggers once per company.
 */
async function removeImportWorkspaces(client: Client): Promise<void> {
  const like = `${IMPORT_WORKSPACE_PREFIX.replaceAll('_', '\\_')}%`;
  for (const table of ['contacts', 'leads', 'companies', 'workspaces']) {
    await client.query(
      `DELETE FROM ${table} WHERE ${table === 'workspaces' ? 'id' : 'workspace_id'} LIKE $1`,
      [like],
    );
  }
  for (const table of [
    'company_changes',
    'lead_changes',
    'company_day_counts',
    'lead_day_counts',
  ]) {
    await client.query(`DELETE FROM ${table} WHERE workspace_id LIKE $1`, [like]);
  }
}

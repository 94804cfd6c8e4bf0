// (vi) The visit import: `admin import-visits` of an NDJSON file against COPY of the same rows into
// the same tables, and the import with the visit feed's tracking off; the import's peak RSS.
import { spawn } from 'node:child_process';
import { createReadStream, createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Client } from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { countRows, setTracking } from './feeds';
import { residentMb } from './servers';
import { median, type Target } from './targets';

export const VISIT_IMPORT_WORKSPACE = 'ws_bench_visit_import';
const PAGES_PER_VISIT = 3;
const COMPANIES = 1_000;

/** The visit feed's tracking (migration 20261203000000_visit_changes): its triggers by table. */
const TRACKING = new Map([
  ['visits', ['visits_changes_insert', 'visits_changes_update', 'visits_changes_delete']],
  [
    'page_views',
    ['page_views_changes_insert', 'page_views_changes_update', 'page_views_changes_delete'],
  ],
]);

export interface VisitImportRuns {
  visits: number;
  pageViews: number;
  /** The NDJSON file's size. */
  fileBytes: number;
  /** Seconds of each import (the admin tool's process, start to exit), tracking on and off. */
  on: number[];
  off: number[];
  /** Seconds of each COPY of the same rows (tracking on), one transaction each. */
  copy: number[];
  /** The import's peak RSS, over every import. */
  peakRssMb: number;
}

const VISIT_COLUMNS =
  'workspace_id, id, company_id, started_at, ended_at, page_view_count, landing_page, ' +
  'referrer, source, medium, campaign, term, content, device_type, country';
const PAGE_VIEW_COLUMNS =
  'workspace_id, visit_id, visit_started_at, position, company_id, hostname, path, title, ' +
  'viewed_at, seconds_on_page';

const PATHS = ['/', '/pricing', '/product', '/customers', '/demo', '/blog/intent-data-explained'];
const ORIGINS: (string | null)[][] = [
  [null, null, null, null],
  ['https://www.google.com/', 'google', 'organic', null],
  ['https://www.linkedin.com/', 'linkedin', 'paid_social', 'q4-abm'],
];

/** A small deterministic generator (mulberry32): the same file in every run. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/**
 * Writes the import's NDJSON file and the same rows as COPY's text files (visits without their
 * generated duration; the page views), `visits` visits of three pages each, over the last 300
 * days, on the import workspace's companies.
 */
async function writeFiles(dir: string, visits: number, now: Date) {
  const files = {
    ndjson: join(dir, 'visits.ndjson'),
    visits: join(dir, 'visits.tsv'),
    pageViews: join(dir, 'page-views.tsv'),
  };
  const outputs = [files.ndjson, files.visits, files.pageViews].map((file) =>
    createWriteStream(file),
  );
  const write = async (output: (typeof outputs)[number], text: string) => {
    if (!output.write(text)) await new Promise<void>((resolve) => output.once('drain', resolve));
  };
  const draw = random(42);
  const text = (value: string | number | null) => (value === null ? '\\N' : String(value));
  for (let n = 0; n < visits; n++) {
    const id = `vi_import_${String(n).padStart(8, '0')}`;
    const companyId = `co_import_${String(Math.floor(draw() * COMPANIES)).padStart(4, '0')}`;
    const started = now.getTime() - 3_600_000 - Math.floor(draw() * 300 * 86_400_000);
    const gap = 10_000 + Math.floor(draw() * 170) * 1000;
    const [referrer, source, medium, campaign] = ORIGINS[Math.floor(draw() * ORIGINS.length)];
    const pages = Array.from({ length: PAGES_PER_VISIT }, (_, k) => ({
      hostname: 'www.example.com',
      path: PATHS[Math.floor(draw() * PATHS.length)],
      title: 'A page of the site',
      viewedAt: new Date(started + k * gap).toISOString(),
      secondsOnPage: k < PAGES_PER_VISIT - 1 ? gap / 1000 : null,
    }));
    const visit = {
      id,
      companyId,
      startedAt: new Date(started).toISOString(),
      endedAt: pages[PAGES_PER_VISIT - 1].viewedAt,
      referrer,
      source,
      medium,
      campaign,
      term: null,
      content: null,
      deviceType: draw() < 0.7 ? 'desktop' : 'mobile',
      country: 'FR',
      pages,
    };
    await write(outputs[0], `${JSON.stringify(visit)}\n`);
    const visitRow = [
      VISIT_IMPORT_WORKSPACE,
      id,
      companyId,
      visit.startedAt,
      visit.endedAt,
      PAGES_PER_VISIT,
      pages[0].path,
      referrer,
      source,
      medium,
      campaign,
      null,
      null,
      visit.deviceType,
      visit.country,
    ];
    await write(outputs[1], `${visitRow.map(text).join('\t')}\n`);
    const pageRows = pages.map((page, k) =>
      [
        VISIT_IMPORT_WORKSPACE,
        id,
        visit.startedAt,
        k,
        companyId,
        page.hostname,
        page.path,
        page.title,
        page.viewedAt,
        page.secondsOnPage,
      ]
        .map(text)
        .join('\t'),
    );
    await write(outputs[2], `${pageRows.join('\n')}\n`);
  }
  await Promise.all(outputs.map((output) => new Promise<void>((resolve) => output.end(resolve))));
  return files;
}

const setVisitTracking = (client: Client, on: boolean) => setTracking(client, TRACKING, on);
const count = (client: Client, table: string) =>
  countRows(client, table, 'workspace_id = $1', VISIT_IMPORT_WORKSPACE);

/** Removes the import workspace's visits, their page views and changes, untracked. */
async function removeVisits(client: Client): Promise<void> {
  await setVisitTracking(client, false);
  try {
    await client.query('DELETE FROM visits WHERE workspace_id = $1', [VISIT_IMPORT_WORKSPACE]);
    await client.query('DELETE FROM visit_changes WHERE workspace_id = $1', [
      VISIT_IMPORT_WORKSPACE,
    ]);
  } finally {
    await setVisitTracking(client, true);
  }
  await client.query('VACUUM visits, page_views, visit_changes');
}

/** The workspace and its companies: copies of the large workspace's first ones, renamed. */
async function createWorkspace(client: Client, sourceWorkspace: string): Promise<void> {
  await removeWorkspace(client);
  await client.query(
    `INSERT INTO workspaces (id, name, plan, created_at, updated_at)
     VALUES ($1, 'Bench Visit Import', 'growth', now(), now())`,
    [VISIT_IMPORT_WORKSPACE],
  );
  await client.query(
    `INSERT INTO companies
     SELECT (jsonb_populate_record(c, jsonb_build_object(
         'id', 'co_import_' || lpad((s.n - 1)::text, 4, '0'), 'workspace_id', $1::text))).*
     FROM (SELECT id, row_number() OVER (ORDER BY id) AS n FROM companies
       WHERE workspace_id = $2 ORDER BY id LIMIT $3) s
     JOIN companies c ON c.workspace_id = $2 AND c.id = s.id`,
    [VISIT_IMPORT_WORKSPACE, sourceWorkspace, COMPANIES],
  );
}

async function removeWorkspace(client: Client): Promise<void> {
  await removeVisits(client);
  await client.query('DELETE FROM companies WHERE workspace_id = $1', [VISIT_IMPORT_WORKSPACE]);
  await client.query('DELETE FROM workspaces WHERE id = $1', [VISIT_IMPORT_WORKSPACE]);
}

/** One run of the admin tool's import, timed from its start to its exit, its RSS sampled. */
async function timedImport(
  cli: string,
  env: Record<string, string>,
  file: string,
): Promise<{ seconds: number; peakRssMb: number; output: string }> {
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [cli, 'import-visits', '--workspace', VISIT_IMPORT_WORKSPACE, '--file', file, '--json'],
    { env: { ...process.env, ...env, LOG_LEVEL: 'silent' }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  let errors = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
  let peakRssMb = 0;
  const sampler = setInterval(() => {
    peakRssMb = Math.max(peakRssMb, residentMb(child.pid));
  }, 50);
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  clearInterval(sampler);
  const seconds = (performance.now() - started) / 1000;
  if (code !== 0) throw new Error(`import-visits exited ${code}: ${errors.slice(0, 500)}`);
  return { seconds, peakRssMb, output };
}

/** COPY of the same rows into the same tables, in one transaction, timed. */
async function timedCopy(client: Client, files: { visits: string; pageViews: string }) {
  const started = performance.now();
  await client.query('BEGIN');
  try {
    await pipeline(
      createReadStream(files.visits),
      client.query(copyFrom(`COPY visits (${VISIT_COLUMNS}) FROM STDIN`)),
    );
    await pipeline(
      createReadStream(files.pageViews),
      client.query(copyFrom(`COPY page_views (${PAGE_VIEW_COLUMNS}) FROM STDIN`)),
    );
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  }
  return (performance.now() - started) / 1000;
}

/**
 * Imports of `pageViews` page views (visits of three pages) into a fresh workspace, `rounds`
 * rounds of three in alternating order: the import with tracking on, COPY of the same rows
 * (tracking on), the import with tracking off. Each into the same empty workspace, its visits
 * removed after; each checked (every visit there, and a change per visit or none).
 */
export async function measureVisitImport(
  client: Client,
  options: {
    cli: string;
    env: Record<string, string>;
    sourceWorkspace: string;
    pageViews: number;
    rounds: number;
    now: Date;
  },
  log: (line: string) => void,
): Promise<VisitImportRuns> {
  const visits = Math.ceil(options.pageViews / PAGES_PER_VISIT);
  const dir = mkdtempSync(join(tmpdir(), 'bench-visit-import-'));
  try {
    const files = await writeFiles(dir, visits, options.now);
    const runs: VisitImportRuns = {
      visits,
      pageViews: visits * PAGES_PER_VISIT,
      fileBytes: statSync(files.ndjson).size,
      on: [],
      off: [],
      copy: [],
      peakRssMb: 0,
    };
    await createWorkspace(client, options.sourceWorkspace);
    const once = async (kind: 'on' | 'off' | 'copy') => {
      let seconds: number;
      if (kind === 'copy') {
        seconds = await timedCopy(client, files);
      } else {
        if (kind === 'off') await setVisitTracking(client, false);
        try {
          const run = await timedImport(options.cli, options.env, files.ndjson);
          const added = (JSON.parse(run.output) as { visits: { added: number } }).visits.added;
          if (added !== visits) throw new Error(`the import added ${added} visits of ${visits}`);
          runs.peakRssMb = Math.max(runs.peakRssMb, run.peakRssMb);
          seconds = run.seconds;
        } finally {
          await setVisitTracking(client, true);
        }
      }
      const stored = await count(client, 'visits');
      const pages = await count(client, 'page_views');
      const changes = await count(client, 'visit_changes');
      const expectedChanges = kind === 'off' ? 0 : visits;
      if (stored !== visits || pages !== runs.pageViews || changes !== expectedChanges) {
        throw new Error(
          `${kind}: ${stored} visits, ${pages} page views, ${changes} changes stored ` +
            `(expected ${visits}, ${runs.pageViews}, ${expectedChanges})`,
        );
      }
      runs[kind].push(seconds);
      log(`visit import ${kind}: ${seconds.toFixed(2)} s`);
      await removeVisits(client);
    };
    for (let round = 0; round < options.rounds; round++) {
      const order: ('on' | 'off' | 'copy')[] = ['on', 'copy', 'off'];
      for (const kind of round % 2 === 0 ? order : order.reverse()) await once(kind);
    }
    return runs;
  } finally {
    await removeWorkspace(client).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}

export const VISIT_IMPORT_TARGETS: Target<VisitImportRuns>[] = [
  {
    says: 'import speed >= 0.5x COPY of the same rows (medians)',
    figure: (runs) => median(runs.copy) / median(runs.on),
    atLeast: 0.5,
    unit: 'x',
  },
  {
    says: 'import peak RSS <= 256 MiB',
    figure: (runs) => runs.peakRssMb,
    atMost: 256,
    unit: 'MB',
  },
  {
    says: 'import with the visit feed tracking / without <= 1.15x (medians)',
    figure: (runs) => median(runs.on) / median(runs.off),
    atMost: 1.15,
    unit: 'x',
  },
];

export function renderVisitImport(runs: VisitImportRuns): string[] {
  const seconds = (values: number[]) => values.map((v) => v.toFixed(2)).join(', ');
  const rate = (values: number[]) =>
    Math.round(runs.pageViews / median(values)).toLocaleString('en');
  return [
    `### (vi) import of ${runs.pageViews.toLocaleString('en')} page views ` +
      `(${runs.visits.toLocaleString('en')} visits of ${PAGES_PER_VISIT} pages) from NDJSON`,
    '',
    '| pass | runs | median s | page views/s | each run s, in order |',
    '|---|---:|---:|---:|---|',
    `| import-visits, the visit feed's tracking on | ${runs.on.length} | ` +
      `${median(runs.on).toFixed(2)} | ${rate(runs.on)} | ${seconds(runs.on)} |`,
    `| import-visits, tracking off (its triggers disabled) | ${runs.off.length} | ` +
      `${median(runs.off).toFixed(2)} | ${rate(runs.off)} | ${seconds(runs.off)} |`,
    `| COPY of the same rows into the same tables, tracking on | ${runs.copy.length} | ` +
      `${median(runs.copy).toFixed(2)} | ${rate(runs.copy)} | ${seconds(runs.copy)} |`,
    '',
    `The file: ${(runs.fileBytes / 1e6).toFixed(0)} MB, ` +
      `${Math.round(runs.fileBytes / runs.pageViews)} bytes per page view. The import is the ` +
      "built admin tool's process, timed from its start to its exit (Node's start included), " +
      `its peak RSS ${runs.peakRssMb.toFixed(0)} MB; COPY reads prepared text files (the ` +
      'visits without their generated duration, then the page views) in one transaction. ' +
      'Rounds in alternating order (on, COPY, off, off, COPY, on, …), each into the same ' +
      'empty workspace of 1,000 companies.',
  ];
}

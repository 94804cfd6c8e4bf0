/*
 * A CRM sync job over the change feeds: keeps a copy of every company and lead of the workspace,
 * deletions included, in a directory that stands in for the CRM (companies.json and leads.json,
 * each an object id -> item as the API returns it).
 *
 *   VISITOR_API_KEY=st_... VISITOR_API_URL=https://api.example.com node dist/examples/sync.js
 *   (SYNC_STATE_FILE, default sync-state.json: the cursors; SYNC_STORE_DIR, default crm: the copy)
 *
 * Run it as often as you like (one run at a time): each run reads each feed from its stored cursor
 * until caught up, then exits. It reads each feed through its stream (GET
 * /v1/companies/changes/stream, /v1/leads/changes/stream): the first run's whole initial load in
 * one request (a few for a large workspace: a stream ends after five minutes and the client goes
 * on), each later run's catch-up likewise. The client yields the stream in batches shaped as the
 * feed's pages, one per checkpoint, and resumes a dropped stream from its last checkpoint; with
 * `limit` the run reads pages of that size instead. The recipe is the same either way, per feed:
 * - No stored cursor: the feed starts from the beginning, every live item as an upsert, then every
 *   later change. Store `nextCursor` and pass it next time: only what changed since comes.
 * - Apply each page in order: an upsert replaces the item with this `id` (it is the item as it is
 *   now), a delete removes it. An item comes once per page at most, at its latest change.
 * - Store the page's `nextCursor` ONLY once the page is durably in the CRM. A crash in between
 *   reads the page again on the next run: applying it twice changes nothing (upserts replace,
 *   deletes of absent items are no-ops). Storing first could skip the page for good.
 * - Cursor and copy are written aside then renamed (with fsync), so that a crash leaves the old
 *   file or the new one, never half of one.
 * - `hasMore: false`: caught up. An empty page with `hasMore: true` means changes are committed
 *   but held back behind an older transaction: the client's iterator waits (with backoff) and asks
 *   again; if they stay held back, the run ends with `caughtUp: false` and the next run goes on.
 * - 410 (CursorExpiredError): the cursor is older than deletions the service has pruned, so some
 *   deletions may have been missed. The feed starts again without a cursor and the copy is
 *   rebuilt: every item the fresh pass brings is upserted, and once the pass has caught up, every
 *   item of the copy it did not bring is removed. Only then is a cursor stored: a run that fails
 *   during the rebuild leaves the expired one, so the next run starts the rebuild again instead of
 *   forgetting what it had not yet removed. A run without a stored cursor over a copy that has
 *   items (a lost state file) does the same; a first run, into an empty copy, has nothing to
 *   remove and stores its cursor page after page.
 *
 * The file store rewrites a whole type's file per page, which suits an example; a real CRM upserts
 * and deletes by id, and lists its ids for the rebuild's removal.
 *
 * A CRM maps a few of the fields, not all of them: `fields` asks the feeds for those alone (and the
 * ids), which the service then neither builds nor sends. Run from the command line, the job asks
 * for CRM_FIELDS below; `runSync` without `fields` copies every field.
 *
 * The evidence behind a score, for the accounts a rep calls (`recentVisits`; on from the command
 * line): once the companies are copied, every company of the copy whose `intentLevel` is `hot`
 * gets its visits of the last `days` (14 by default, the score's decay window) in visits.json
 * (company id -> its visits, newest first, with CRM_VISIT_FIELDS), read by GET /v1/visits with up
 * to 100 `companyId`s a request; a company no longer hot, or gone, leaves the file. They are read
 * again at each run, not followed by a feed: a window of recent visits of a few companies is a few
 * requests, and a copy of every visit is the visits' feed's job (client.visitChanges). The key
 * needs `visits:read`.
 */
import { mkdir, open, readFile, rename } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import {
  Client,
  CursorExpiredError,
  type ChangePage,
  type CompanyField,
  type CompanyUpsert,
  type ItemDeletion,
  type LeadField,
  type LeadUpsert,
  type SelectedVisit,
  type VisitField,
} from '../src/index.js';

/** What a CRM's account, contact and lead records map: the fields this job asks for. */
export const CRM_FIELDS = {
  companies: [
    'name',
    'domain',
    'industry',
    'country',
    'intentScore',
    'intentLevel',
    'crmStatus',
    'lastSeen',
    'contacts.name',
    'contacts.jobTitle',
    'contacts.email',
  ],
  leads: ['companyId', 'contactName', 'contactEmail', 'intentScore', 'status', 'recommendedAction'],
} as const satisfies SyncFields;

/** What the CRM's activity timeline shows of each recent visit of a hot account. */
export const CRM_VISIT_FIELDS = [
  'companyId',
  'startedAt',
  'durationSeconds',
  'landingPage',
  'source',
  'campaign',
  'pages.path',
  'pages.title',
] as const satisfies readonly VisitField[];

type CrmVisit = SelectedVisit<(typeof CRM_VISIT_FIELDS)[number]>;

/** The most `companyId`s GET /v1/visits takes in one request. */
const COMPANIES_PER_REQUEST = 100;

type FeedName = 'companies' | 'leads';

/** What persists between runs: each feed's last stored cursor. */
export type SyncState = Partial<Record<FeedName, string>>;

export interface FeedResult {
  /** The stored cursor had expired (410): the feed was read again from the start. */
  restarted: boolean;
  /** This run read the feed from the start (the first run, or a restart). */
  fromStart: boolean;
  /** Changes applied. */
  upserts: number;
  deletes: number;
  /** Items of the copy that a restart's pass did not bring, removed at its end. */
  removed: number;
  /** false when changes were still held back by a long transaction when the run stopped waiting. */
  caughtUp: boolean;
}

export interface SyncResult {
  companies: FeedResult;
  leads: FeedResult;
  /** With `recentVisits`: the hot companies whose visits were read, and their visits. */
  recentVisits?: { companies: number; visits: number };
}

export interface SyncOptions {
  client: Client;
  /** The cursors, one JSON file. */
  stateFile: string;
  /** The CRM stand-in: companies.json and leads.json in this directory. */
  storeDir: string;
  /**
   * Read the feeds by pages of this many changes (1..1000) instead of through their streams
   * (absent: the streams).
   */
  limit?: number;
  /** Waits for held-back changes before a run gives up (the client's default when absent). */
  maxWaits?: number;
  /**
   * The fields to copy of each item (and its id); absent: every field. Keep the same from run to
   * run: a change of fields needs a fresh copy (a new state file), or the copy mixes both.
   */
  fields?: SyncFields;
  /**
   * Also keep the visits of the last `days` (1..395, default 14) of each hot company of the copy,
   * in visits.json (see the header); absent: no visits are read. With `fields`, the companies'
   * must include `intentLevel`.
   */
  recentVisits?: { days?: number };
}

/** The fields a sync copies, per feed (absent: every field). */
export interface SyncFields {
  companies?: readonly CompanyField[];
  leads?: readonly LeadField[];
}

/** A feed: its pages from a cursor, and the item of one of its upserts. */
interface Feed<U extends { op: 'upsert'; id: string }, T> {
  name: FeedName;
  pages(cursor: string | undefined): AsyncIterable<ChangePage<U | ItemDeletion>>;
  item(upsert: U): T;
}

export async function runSync(options: SyncOptions): Promise<SyncResult> {
  const { client, limit, maxWaits } = options;
  const fields = options.fields ?? {};
  await mkdir(options.storeDir, { recursive: true });
  const state = await readState(options.stateFile);
  const companies: Feed<CompanyUpsert<CompanyField>, unknown> = {
    name: 'companies',
    pages: (cursor) =>
      limit === undefined
        ? client.companyChangeStream({ cursor, maxWaits, fields: fields.companies })
        : client.companyChanges({ cursor, limit, maxWaits, fields: fields.companies }),
    item: (upsert) => upsert.company,
  };
  const leads: Feed<LeadUpsert<LeadField>, unknown> = {
    name: 'leads',
    pages: (cursor) =>
      limit === undefined
        ? client.leadChangeStream({ cursor, maxWaits, fields: fields.leads })
        : client.leadChanges({ cursor, limit, maxWaits, fields: fields.leads }),
    item: (upsert) => upsert.lead,
  };
  // Refused before anything is read: a bad option does not end a run halfway.
  const days = options.recentVisits?.days ?? 14;
  if (options.recentVisits && fields.companies && !fields.companies.includes('intentLevel')) {
    throw new Error("recentVisits needs 'intentLevel' among the companies' fields");
  }
  if (!Number.isInteger(days) || days < 1 || days > 395) {
    throw new Error(`recentVisits.days must be an integer from 1 to 395, not ${days}`);
  }
  const result: SyncResult = {
    companies: await syncFeed(companies, state, options),
    leads: await syncFeed(leads, state, options),
  };
  if (options.recentVisits) {
    result.recentVisits = await syncRecentVisits(client, options.storeDir, days);
  }
  return result;
}

/**
 * Replaces visits.json with the visits since `days` ago of each hot company of the copy just
 * written, newest first (an empty list for a hot company without any).
 */
async function syncRecentVisits(
  client: Client,
  storeDir: string,
  days: number,
): Promise<{ companies: number; visits: number }> {
  const copy =
    (await readJsonFile<Record<string, { intentLevel?: string }>>(
      join(storeDir, 'companies.json'),
    )) ?? {};
  const hot = Object.keys(copy).filter((id) => copy[id]?.intentLevel === 'hot');
  const since = new Date(Date.now() - days * 24 * 60 * 60 * 1000);
  const visits = new Map<string, CrmVisit[]>(hot.map((id) => [id, []]));
  let count = 0;
  for (let start = 0; start < hot.length; start += COMPANIES_PER_REQUEST) {
    const companyId = hot.slice(start, start + COMPANIES_PER_REQUEST);
    for await (const visit of client.visits({ companyId, since, fields: CRM_VISIT_FIELDS })) {
      visits.get(visit.companyId)?.push(visit);
      count++;
    }
  }
  // Written whole, as the copies are: a company no longer hot, or deleted, is no longer in it.
  await writeJsonFile(join(storeDir, 'visits.json'), Object.fromEntries(visits));
  return { companies: hot.length, visits: count };
}

async function syncFeed<U extends { op: 'upsert'; id: string }, T>(
  feed: Feed<U, T>,
  state: SyncState,
  options: SyncOptions,
): Promise<FeedResult> {
  const copyFile = join(options.storeDir, `${feed.name}.json`);
  const saved = await readJsonFile<Record<string, T>>(copyFile);
  const copy = new Map(Object.entries(saved ?? {}));
  let onDisk = saved !== undefined; // an empty feed still leaves its (empty) copy
  const stored = state[feed.name];

  /** Reads the feed from `cursor` (none: the start) until caught up, applying and storing. */
  const pass = async (cursor: string | undefined, restarted: boolean): Promise<FeedResult> => {
    const result = {
      restarted,
      fromStart: cursor === undefined,
      upserts: 0,
      deletes: 0,
      removed: 0,
      caughtUp: false,
    };
    // From the start over a copy that has items (a restart, or a lost state file): whatever this
    // pass does not bring is gone from the source, and is removed once the pass has caught up.
    let brought = cursor === undefined && copy.size > 0 ? new Set<string>() : null;
    for await (const page of feed.pages(cursor)) {
      for (const change of page.data) {
        if (change.op === 'delete') {
          copy.delete(change.id);
          result.deletes++;
        } else {
          copy.set(change.id, feed.item(change));
          brought?.add(change.id);
          result.upserts++;
        }
      }
      result.caughtUp = !page.hasMore;
      if (brought && !result.caughtUp) {
        // A rebuild stores no cursor before its end (see the header); its upserts go in already.
        if (page.data.length > 0) {
          await writeCopy(copyFile, copy);
          onDisk = true;
        }
        continue;
      }
      if (brought) {
        for (const id of copy.keys()) {
          if (brought.has(id)) continue;
          copy.delete(id);
          result.removed++;
        }
        brought = null;
      }
      // The page is durable before its cursor is: a crash in between reads it again, harmlessly.
      if (page.data.length > 0 || result.removed > 0 || !onDisk) {
        await writeCopy(copyFile, copy);
        onDisk = true;
      }
      if (state[feed.name] === page.nextCursor) continue; // an empty page: nothing moved
      state[feed.name] = page.nextCursor;
      await writeJsonFile(options.stateFile, state);
    }
    return result;
  };

  try {
    return await pass(stored, false);
  } catch (error) {
    if (!(error instanceof CursorExpiredError) || stored === undefined) throw error;
    return pass(undefined, true);
  }
}

async function readState(file: string): Promise<SyncState> {
  return (await readJsonFile<SyncState>(file)) ?? {};
}

function writeCopy<T>(file: string, copy: Map<string, T>): Promise<void> {
  return writeJsonFile(file, Object.fromEntries(copy));
}

async function readJsonFile<T>(file: string): Promise<T | undefined> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as T;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined; // the first run
    throw error;
  }
}

/**
 * Written aside, flushed to disk, renamed over the file, and the rename flushed too: after a
 * crash the file is the old one or the new one, whole, and once this resolves it is the new one.
 */
async function writeJsonFile(file: string, value: unknown): Promise<void> {
  const aside = `${file}.tmp`;
  const handle = await open(aside, 'w');
  try {
    await handle.writeFile(JSON.stringify(value) + '\n');
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(aside, file);
  const directory = await open(dirname(file), 'r');
  try {
    await directory.sync();
  } finally {
    await directory.close();
  }
}

async function main(): Promise<void> {
  const apiKey = process.env.VISITOR_API_KEY;
  if (!apiKey) throw new Error('Set VISITOR_API_KEY to the key of the workspace to sync');
  const result = await runSync({
    client: new Client({ apiKey, baseUrl: process.env.VISITOR_API_URL ?? 'http://localhost:3000' }),
    stateFile: process.env.SYNC_STATE_FILE ?? 'sync-state.json',
    storeDir: process.env.SYNC_STORE_DIR ?? 'crm',
    fields: CRM_FIELDS,
    recentVisits: {},
  });
  console.log(JSON.stringify(result));
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  });
}

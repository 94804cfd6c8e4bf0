/*
 * A CRM sync job: every company and lead that changed since the last successful run, written to
 * a JSON-lines file that stands in for the CRM.
 *
 *   VISITOR_API_KEY=st_... VISITOR_API_URL=https://api.example.com node dist/examples/sync.js
 *
 * The recipe (the API's pagination rule 2): keep the date of the last successful pass and send it
 * as `since`; record the new date BEFORE reading, and save it only once everything was written.
 * - Recorded before: a company visited while we page gets a `lastSeen` after that date, so the
 *   next run sees it even when this run missed it (it moved up the list, past pages already read).
 * - Saved only after success: a run that fails part-way saves nothing, and the next one starts
 *   again from the same date. Nothing is lost; some items come twice.
 * Items therefore arrive more than once (a retried run, a company that moved down a page while we
 * read): the CRM must UPSERT by `id`, never insert blindly. In the file below that means the
 * last line for a given `type` and `id` wins.
 *
 * `since` is compared with the API's own dates (`lastSeen`, `createdAt`): `now` must be the same
 * time as the service's (a clock synchronised by NTP). A clock ahead of the service's would skip
 * what happened in the gap.
 */
import { open, readFile, rename, writeFile } from 'node:fs/promises';
import { Client } from '../src/index.js';

interface SyncState {
  /** The start of the last successful run, ISO 8601. */
  since: string;
}

export interface SyncResult {
  /** The `since` this run read from (null for the first, full, run). */
  since: string | null;
  /** The `since` saved for the next run: this run's start. */
  nextSince: string;
  companies: number;
  leads: number;
}

export async function runSync(options: {
  client: Client;
  stateFile: string;
  outputFile: string;
  now: () => Date;
}): Promise<SyncResult> {
  const state = await readState(options.stateFile);
  const startedAt = options.now().toISOString();
  const since = state?.since;
  const output = await open(options.outputFile, 'a');
  let companies = 0;
  let leads = 0;
  try {
    for await (const company of options.client.companies({ since })) {
      await output.write(JSON.stringify({ type: 'company', id: company.id, data: company }) + '\n');
      companies++;
    }
    for await (const lead of options.client.leads({ since })) {
      await output.write(JSON.stringify({ type: 'lead', id: lead.id, data: lead }) + '\n');
      leads++;
    }
    // Durable before the new date is: a crash between the two re-sends, never skips.
    await output.sync();
  } finally {
    await output.close();
  }
  await saveState(options.stateFile, { since: startedAt });
  return { since: since ?? null, nextSince: startedAt, companies, leads };
}

async function readState(file: string): Promise<SyncState | undefined> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as SyncState;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined; // the first run
    throw error;
  }
}

/** Written aside then renamed, so that a crash never leaves a half-written state file. */
async function saveState(file: string, state: SyncState): Promise<void> {
  await writeFile(`${file}.tmp`, JSON.stringify(state) + '\n');
  await rename(`${file}.tmp`, file);
}

async function main(): Promise<void> {
  const apiKey = process.env.VISITOR_API_KEY;
  if (!apiKey) throw new Error('Set VISITOR_API_KEY to the key of the workspace to sync');
  const result = await runSync({
    client: new Client({ apiKey, baseUrl: process.env.VISITOR_API_URL ?? 'http://localhost:3000' }),
    stateFile: process.env.SYNC_STATE_FILE ?? 'sync-state.json',
    outputFile: process.env.SYNC_OUTPUT_FILE ?? 'crm.jsonl',
    now: () => new Date(),
  });
  console.log(JSON.stringify(result));
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  });
}

import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { COMPANY_ITEM } from '../src/companies/companies.sql';
import { itemJsonSql } from '../src/items/item-sql';
import type { SyncRun } from './feeds';
import { readQuietly, type QuietReads } from './noisy-neighbour';
import type { Target } from './targets';

/*
 * Workload (s), the change stream: a new client's full initial sync of a workspace through
 * GET /v1/companies/changes/stream (following `hasMore: true` with the last cursor, as a client
 * does after the time bound), beside the same rows written as JSON by PostgreSQL alone
 * (`COPY (...) TO STDOUT` through psql, to /dev/null: the limit of what the database writes), and
 * a quiet workspace reading pages alone, then during a stream. Then the same stream asking for
 * the few fields a sync maps (STREAM_FIELDS), against both.
 */

/** What a CRM sync asks the stream for in (s): a few fields of each company (and its id). */
export const STREAM_FIELDS = 'name,domain,intentScore,lastSeen';

const NEWLINE = 0x0a;
const QUOTE = 0x22;
const CHANGE_START = '{"op"';
const ID_MARK = Buffer.from('"id":"');

export interface StreamSync {
  /** Requests made (a stream ends after CHANGE_STREAM_MAX_SECONDS, and the client goes on). */
  requests: number;
  seconds: number;
  /** From the request to the first line of the first stream, ms. */
  firstLineMs: number;
  changes: number;
  distinct: number;
  /** Bytes of NDJSON received. */
  bytes: number;
  /** The service's peak resident memory during the sync, MB. */
  peakRssMb: number;
}

export interface CopyRun {
  seconds: number;
  bytes: number;
  rows: number;
}

export interface ChangeStreamRun {
  /** The large workspace's stream, the service otherwise idle. */
  large: StreamSync;
  /** The same with `fields=id,` STREAM_FIELDS. */
  largeWithFields: StreamSync;
  /** The same, while a quiet workspace reads pages. */
  largeBesideQuiet: StreamSync;
  small: StreamSync;
  smallCompanies: number;
  copy: CopyRun | undefined;
  quietAlone: QuietReads;
  quietDuringStream: QuietReads;
}

/** The stream's run, with the paged feed's sync (h) when it ran too. */
export interface StreamBesideSync {
  stream: ChangeStreamRun;
  sync: SyncRun | undefined;
}

export const CHANGE_STREAM_TARGETS: Target<StreamBesideSync>[] = [
  {
    says: `the stream with fields=id,${STREAM_FIELDS} >= 3x faster than the whole stream`,
    figure: ({ stream }) => stream.large.seconds / stream.largeWithFields.seconds,
    atLeast: 3,
    unit: 'x',
  },
  {
    says: 'the stream with those fields >= 2x faster than COPY of the whole rows as JSON',
    figure: ({ stream }) => stream.copy && stream.copy.seconds / stream.largeWithFields.seconds,
    atLeast: 2,
    unit: 'x',
  },
  {
    says: 'full sync through the stream >= 4x faster than the paged feed (h)',
    figure: ({ stream, sync }) => sync && sync.feed.seconds / stream.large.seconds,
    atLeast: 4,
    unit: 'x',
  },
  {
    says: "the stream's throughput >= 0.5x COPY's",
    figure: ({ stream }) => stream.copy && stream.copy.seconds / stream.large.seconds,
    atLeast: 0.5,
    unit: 'x',
  },
  {
    says: 'peak RSS <= 256 MiB, streaming a small workspace and the large one',
    figure: ({ stream }) => Math.max(stream.large.peakRssMb, stream.small.peakRssMb),
    atMost: 256,
    unit: 'MB',
  },
  {
    says: 'first line <= 200 ms',
    figure: ({ stream }) => stream.large.firstLineMs,
    atMost: 200,
    unit: 'ms',
  },
  {
    says: 'quiet p99 during a stream <= 3x alone',
    figure: ({ stream }) => stream.quietDuringStream.p99 / stream.quietAlone.p99,
    atMost: 3,
    unit: 'x',
  },
];

export interface ChangeStreamOptions {
  port: number;
  databaseUrl: string;
  large: { workspaceId: string; key: string; companies: number };
  small: { key: string; companies: number };
  quiet: { path: string; key: string };
  seconds: number;
  residentMb: () => number;
  log: (line: string) => void;
}

/** Reads the companies' stream to its end (hasMore false), following each time-bound end. */
export async function streamSync(
  port: number,
  key: string,
  residentMb: () => number,
  fields?: string,
): Promise<StreamSync> {
  const ids = new Set<string>();
  let peakRssMb = residentMb();
  const sampler = setInterval(() => (peakRssMb = Math.max(peakRssMb, residentMb())), 100);
  const started = performance.now();
  let firstLineMs = NaN;
  let requests = 0;
  let changes = 0;
  let bytes = 0;
  let cursor: string | undefined;
  try {
    for (;;) {
      requests++;
      const query = new URLSearchParams();
      if (fields !== undefined) query.set('fields', fields);
      if (cursor) query.set('cursor', cursor);
      const path = `/v1/companies/changes/stream${query.size > 0 ? `?${query.toString()}` : ''}`;
      const last = await new Promise<{ cursor: string; hasMore: boolean }>((resolve, reject) => {
        const outgoing = request(
          { host: '127.0.0.1', port, path, headers: { authorization: `Bearer ${key}` } },
          (response) => {
            if (response.statusCode !== 200) {
              reject(new Error(`change stream: ${response.statusCode ?? 0}`));
              response.resume();
              return;
            }
            let rest: Buffer = Buffer.alloc(0);
            let end: { cursor: string; hasMore: boolean } | undefined;
            // On the bytes as they come, decoding only ids and control lines: the client shares
            // the two cores with the service and PostgreSQL, and decoding and splitting 1.1 GB of
            // text cost it a core (the stream took 67 s read so, 55 s read by curl).
            response.on('data', (chunk: Buffer) => {
              bytes += chunk.length;
              const data = rest.length > 0 ? Buffer.concat([rest, chunk]) : chunk;
              let from = 0;
              for (let at = data.indexOf(NEWLINE); at !== -1; at = data.indexOf(NEWLINE, from)) {
                if (Number.isNaN(firstLineMs)) firstLineMs = performance.now() - started;
                if (data.toString('latin1', from, from + CHANGE_START.length) === CHANGE_START) {
                  changes++;
                  // The id, without parsing the item: `{"op":"upsert","id":"...",...`.
                  const idStart = data.indexOf(ID_MARK, from) + ID_MARK.length;
                  ids.add(data.toString('utf8', idStart, data.indexOf(QUOTE, idStart)));
                } else {
                  const parsed = JSON.parse(data.toString('utf8', from, at)) as {
                    cursor: string;
                    hasMore?: boolean;
                  };
                  cursor = parsed.cursor;
                  if (parsed.hasMore !== undefined) end = { cursor, hasMore: parsed.hasMore };
                }
                from = at + 1;
              }
              rest = data.subarray(from);
            });
            response.on('end', () =>
              end ? resolve(end) : reject(new Error('change stream: cut before its last line')),
            );
            response.on('error', reject);
          },
        );
        outgoing.on('error', reject);
        outgoing.end();
      });
      if (!last.hasMore) break;
    }
  } finally {
    clearInterval(sampler);
  }
  const seconds = (performance.now() - started) / 1000;
  return { requests, seconds, firstLineMs, changes, distinct: ids.size, bytes, peakRssMb };
}

/**
 * The same rows written as JSON by PostgreSQL alone: each change of the workspace's feed, in the
 * feed's order, its item as the service writes it (itemJsonSql), through `COPY (...) TO STDOUT`
 * with psql to /dev/null. Undefined when psql is not installed.
 */
export async function copySync(
  databaseUrl: string,
  workspaceId: string,
): Promise<CopyRun | undefined> {
  const item = itemJsonSql(COMPANY_ITEM, 'page.id').replaceAll('$1', `'${workspaceId}'`);
  const sql =
    `COPY (SELECT json_build_object('op', CASE WHEN page.deleted THEN 'delete' ELSE 'upsert' END, ` +
    `'id', page.id, 'changedAt', page.changed_at, 'company', ${item}) ` +
    `FROM company_changes page WHERE page.workspace_id = '${workspaceId}' ` +
    'ORDER BY page.txid, page.id) TO STDOUT';
  const started = performance.now();
  return new Promise((resolve) => {
    const psql = spawn('psql', [databaseUrl, '-X', '-q', '-c', 'SET jit = off', '-c', sql], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let bytes = 0;
    let rows = 0;
    psql.stdout.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) rows++;
    });
    psql.on('error', () => resolve(undefined));
    psql.on('exit', (code) =>
      resolve(
        code === 0 ? { seconds: (performance.now() - started) / 1000, bytes, rows } : undefined,
      ),
    );
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function measureChangeStream(options: ChangeStreamOptions): Promise<ChangeStreamRun> {
  const { log } = options;
  const copy = await copySync(options.databaseUrl, options.large.workspaceId);
  if (copy) {
    log(`COPY of the feed's rows as JSON: ${copy.rows} rows, ${copy.seconds.toFixed(1)} s`);
  } else log('COPY: psql not found, no limit measured');
  const small = await streamSync(options.port, options.small.key, options.residentMb);
  log(
    `stream of ${small.distinct} companies: ${small.seconds.toFixed(2)} s, peak RSS ` +
      `${small.peakRssMb.toFixed(0)} MB`,
  );
  const large = await streamSync(options.port, options.large.key, options.residentMb);
  log(
    `stream of ${large.distinct} companies: ${large.requests} requests, ` +
      `${large.seconds.toFixed(1)} s, first line ${large.firstLineMs.toFixed(0)} ms, peak RSS ` +
      `${large.peakRssMb.toFixed(0)} MB`,
  );
  const alone = await readQuietly(options);
  await sleep(options.seconds * 1000);
  const quietAlone = await alone.stop();
  const during = await readQuietly(options);
  const largeBesideQuiet = await streamSync(options.port, options.large.key, options.residentMb);
  const quietDuringStream = await during.stop();
  log(
    `the same beside a quiet workspace: ${largeBesideQuiet.seconds.toFixed(1)} s; quiet p99 ` +
      `${quietAlone.p99.toFixed(1)} ms alone, ${quietDuringStream.p99.toFixed(1)} ms during`,
  );
  const largeWithFields = await streamSync(
    options.port,
    options.large.key,
    options.residentMb,
    `id,${STREAM_FIELDS}`,
  );
  const perChange = (run: { bytes: number }, changes: number) => (run.bytes / changes).toFixed(0);
  log(
    `the same with fields=id,${STREAM_FIELDS}: ${largeWithFields.seconds.toFixed(1)} s, ` +
      `${perChange(largeWithFields, largeWithFields.changes)} bytes per change (whole: ` +
      `${perChange(large, large.changes)}${copy ? `; COPY ${perChange(copy, copy.rows)}` : ''})`,
  );
  for (const [name, sync, expected] of [
    ['large', large, options.large.companies],
    ['large with fields', largeWithFields, options.large.companies],
    ['large beside quiet', largeBesideQuiet, options.large.companies],
    ['small', small, options.small.companies],
  ] as const) {
    if (sync.distinct !== expected) {
      throw new Error(
        `the ${name} stream saw ${sync.distinct} distinct companies, not ${expected}`,
      );
    }
  }
  return {
    large,
    largeWithFields,
    largeBesideQuiet,
    small,
    smallCompanies: options.small.companies,
    copy,
    quietAlone,
    quietDuringStream,
  };
}

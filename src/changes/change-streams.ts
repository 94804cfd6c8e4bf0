import { BadRequestException, Inject, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { Logger } from 'pino';
import { Draining } from '../common/draining';
import { Environment } from '../config/environment';
import { Database } from '../database/database';
import type { Queryable } from '../database/queryable';
import { StreamLimitException, StreamsSaturatedException } from '../http/refusals';
import { ROOT_LOGGER } from '../logging/app-logger';
import { markStream, type StreamEnd } from '../logging/stream-outcome';
import type { BodyBudget } from '../items/body-budget';
import { ChangeCursors } from './change-cursor';
import { type FeedRow, type FeedStart, readFeedRow, startOf } from './change-feed';
import type { Feed } from './change-feed-sql';
import { MAX_CHANGES_LIMIT } from './changes-query.dto';
import { type FeedPosition, PagesAhead, type PageReads } from './change-stream-pages';
import { NDJSON, NdjsonWriter, StreamCut } from './ndjson-writer';

/** A refused stream may try again this soon: a stream runs for minutes, not milliseconds. */
export const STREAM_RETRY_AFTER_SECONDS = 5;
// The first page is small, so that the first line comes at once; then pages of the feed's largest,
// READ_AHEAD_PAGES of them read at once while no other workspace reads (change-stream-pages.ts),
// one at a time while another has within NEIGHBOURS_MS. Measured on the benchmark's 1,000,000
// companies (docs/benchmarks.md, (s)): 3 at once, 42.9 s for the whole stream, and a quiet
// workspace's page p99 9.9x its p99 alone; 2, 48.5 s and 5.0x; 1, 65.3 s and 2.2x. Each page's
// statement is CPU-bound, and the quiet workspace's statements share those two cores.
const FIRST_PAGE_CHANGES = 100;
const READ_AHEAD_PAGES = 3;
const NEIGHBOURS_MS = 1_000;
// How many pages' ends one statement finds: 10,000 entries of the feed's index, a few ms.
const BOUNDARIES_AHEAD = 10;

/** What the metrics read of the streams. */
export interface ChangeStreamObserver {
  sent(changes: number, bytes: number): void;
  ended(reason: StreamEnd): void;
}

/** A feed to stream: its name, and its statements (change-feed-sql.ts). */
export interface StreamedFeed {
  feed: Feed;
  /** A page as NDJSON lines: changeFeedSql(..., 'lines'). */
  lines: string;
  /** A range as NDJSON lines: changeFeedSql(..., 'lines', true). */
  range: string;
  /** changeBoundariesSql. */
  boundaries: string;
}

/**
 * The change feeds as one response each (docs/changes.md, "The whole feed in one request"): the
 * pages' changes, in the same order, one JSON object per line, a checkpoint line (`{"cursor"}`)
 * after each page, and a last line (`{"cursor", "hasMore"}`) that only a complete stream has.
 *
 * - Each page is one statement, in the workspace's turn of the fair queue like any other read; no
 *   transaction or snapshot is held between them. The first statement runs before the status is
 *   sent, so that a bad or expired cursor is the usual 400 or 410.
 * - Bounded in time (CHANGE_STREAM_MAX_SECONDS): the stream then ends normally, `hasMore: true`,
 *   and the client goes on from its cursor; so it does when the instance shuts down, or a
 *   statement fails (the client's next request gets the 503). Bounded in memory: the next page is
 *   read once the last one has gone to the socket, and a reader that takes nothing for
 *   CHANGE_STREAM_STALL_SECONDS is cut. A reader that leaves stops the work at once.
 * - At most MAX_CHANGE_STREAMS_PER_WORKSPACE streams of a workspace (beyond: 429) and
 *   MAX_CHANGE_STREAMS of all (beyond: 503) run on an instance at once.
 */
@Injectable()
export class ChangeStreams {
  private readonly maxMs: number;
  private readonly stallMs: number;
  private readonly perWorkspaceLimit: number;
  private readonly instanceLimit: number;
  private readonly byWorkspace = new Map<string, number>();
  private runningCount = 0;
  observer: ChangeStreamObserver | undefined;

  constructor(
    environment: Environment,
    private readonly cursors: ChangeCursors,
    private readonly draining: Draining,
    private readonly database: Database,
    @Inject(ROOT_LOGGER) private readonly logger: Logger,
  ) {
    this.maxMs = environment.CHANGE_STREAM_MAX_SECONDS * 1000;
    this.stallMs = environment.CHANGE_STREAM_STALL_SECONDS * 1000;
    this.perWorkspaceLimit = environment.MAX_CHANGE_STREAMS_PER_WORKSPACE;
    this.instanceLimit = environment.MAX_CHANGE_STREAMS;
  }

  /** Streams running on this instance, every workspace together (a metric). */
  get running(): number {
    return this.runningCount;
  }

  /**
   * Streams `feed` after `cursor` to the response, until caught up or the time bound. Throws
   * (before anything is sent) a 400 for a bad Accept or cursor, a 429 or 503 for the limits, a
   * 410 for an expired cursor; once the stream has begun, it ends it rather than throw.
   */
  async stream(
    statements: StreamedFeed,
    database: Queryable,
    bodies: BodyBudget,
    workspaceId: string,
    cursor: string | undefined,
    request: Request,
    response: Response,
  ): Promise<void> {
    // Real time: the bound is the load balancers' and deploys' (not the clock tests move).
    const startedAt = performance.now();
    if (!acceptsNdjson(request.headers.accept)) {
      throw new BadRequestException([`Accept must allow ${NDJSON}`]);
    }
    const { feed } = statements;
    const from: FeedStart = startOf(this.cursors, feed, workspaceId, cursor);
    const release = this.admit(workspaceId, response);
    const writer = new NdjsonWriter(request, response, this.stallMs, (bytes) =>
      this.observer?.sent(0, bytes),
    );
    let changes = 0;
    let begun = false;
    let ended: StreamEnd | undefined;
    const outcome = () => ({
      changes,
      bytes: writer.bytes,
      ended: ended ?? writer.cutReason ?? 'client_gone',
    });
    response.once('close', () => {
      release();
      if (begun) this.observer?.ended(outcome().ended);
    });
    const reads = pageReads(statements, database, bodies, workspaceId);
    let row: FeedRow;
    try {
      row = await reads.page(from, FIRST_PAGE_CHANGES);
    } catch (error) {
      release();
      throw error;
    }
    if (response.destroyed) return;
    begun = true;
    markStream(response, outcome);
    writer.start();
    if (request.method === 'HEAD') {
      ended = 'completed';
      response.end();
      return;
    }
    let cursorText = this.cursors.encode(feed, workspaceId, row);
    const { fairQueue } = this.database;
    const depth = () =>
      fairQueue.othersAskedWithin(workspaceId, NEIGHBOURS_MS) ? 1 : READ_AHEAD_PAGES;
    const pages = new PagesAhead(reads, row, depth);
    try {
      for (;;) {
        const lines = row.data ?? '';
        row.data = null;
        const count = countLines(lines);
        await writer.write(lines);
        changes += count;
        this.observer?.sent(count, 0);
        cursorText = this.cursors.encode(feed, workspaceId, row);
        if (!row.has_more) ended = 'completed';
        // Changes committed but held back by an older transaction still open (a page, not a range,
        // with none): the client asks again shortly, rather than this stream holding its places.
        else if (count === 0 && row.complete === undefined) ended = 'held_back';
        else if (performance.now() - startedAt >= this.maxMs) ended = 'time_limit';
        else if (this.draining.signal.aborted) ended = 'shutdown';
        if (ended !== undefined) break;
        await writer.write(`{"cursor":${JSON.stringify(cursorText)}}\n`);
        if (writer.closed) return;
        row = await pages.next();
      }
    } catch (error) {
      if (error instanceof StreamCut) return;
      // A statement failed (the database, or the fair queue shed it): the stream so far is whole,
      // and the client goes on from its last cursor (its next request gets the 503, if any).
      ended = 'error';
      this.logger.warn(
        { requestId: request.headers['x-request-id'], context: ChangeStreams.name },
        `change stream ended early: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    writer.end(`{"cursor":${JSON.stringify(cursorText)},"hasMore":${ended !== 'completed'}}\n`);
  }

  /** Counts the stream against its limits until `release`; throws its 429 or 503 when over. */
  private admit(workspaceId: string, response: Response): () => void {
    const running = this.byWorkspace.get(workspaceId) ?? 0;
    if (running >= this.perWorkspaceLimit || this.runningCount >= this.instanceLimit) {
      response.setHeader('Retry-After', String(STREAM_RETRY_AFTER_SECONDS));
      if (running >= this.perWorkspaceLimit) {
        throw new StreamLimitException(this.perWorkspaceLimit);
      }
      throw new StreamsSaturatedException();
    }
    this.byWorkspace.set(workspaceId, running + 1);
    this.runningCount++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.runningCount--;
      const left = (this.byWorkspace.get(workspaceId) ?? 1) - 1;
      if (left === 0) this.byWorkspace.delete(workspaceId);
      else this.byWorkspace.set(workspaceId, left);
    };
  }
}

/**
 * Whether an Accept header admits NDJSON: absent, or naming it, `application/*` or `*\/*` with a
 * weight above 0 (RFC 9110, 12.5.1).
 */
export function acceptsNdjson(accept: string | undefined): boolean {
  if (accept === undefined || accept.trim() === '') return true;
  return accept.split(',').some((entry) => {
    const [range, ...parameters] = entry.split(';').map((part) => part.trim().toLowerCase());
    if (range !== NDJSON && range !== 'application/*' && range !== '*/*') return false;
    const weight = parameters.find((parameter) => parameter.replace(/\s/g, '').startsWith('q='));
    return weight === undefined || Number(weight.replace(/\s/g, '').slice(2)) > 0;
  });
}

/** A stream's statements, each in the workspace's turn, its pages through the body budget. */
function pageReads(
  { feed, lines, range, boundaries }: StreamedFeed,
  database: Queryable,
  bodies: BodyBudget,
  workspaceId: string,
): PageReads {
  const room = { budget: bodies, key: `${feed}/stream:${workspaceId}` };
  return {
    page: (from, limit = MAX_CHANGES_LIMIT) =>
      readFeedRow(database, lines, workspaceId, from, limit, room),
    range: (from, to) =>
      readFeedRow(database, range, workspaceId, from, MAX_CHANGES_LIMIT, room, to),
    boundaries: async (from) =>
      database.query<FeedPosition>(boundaries, [
        workspaceId,
        from.txid,
        from.id,
        MAX_CHANGES_LIMIT,
        BOUNDARIES_AHEAD,
      ]),
  };
}

function countLines(text: string): number {
  let count = 0;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) count++;
  return count;
}

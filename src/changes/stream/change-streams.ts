import { BadRequestException, Inject, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { Logger } from 'pino';
import { Draining } from '../../common/draining';
import { KeyedCounter } from '../../common/keyed-counter';
import { Environment } from '../../config/environment';
import { Database } from '../../database/database';
import { StreamLimitException, StreamsSaturatedException } from '../../http/refusals';
import { ROOT_LOGGER } from '../../logging/app-logger';
import { markStream, type StreamEnd } from '../../logging/stream-outcome';
import { BodyBudget } from '../../items/body-budget';
import { ChangeCursors, type FeedPosition } from '../change-cursor';
import { type FeedRow, readFeedRow, startOf } from '../change-feed';
import type { Feed } from '../change-feed-sql';
import { MAX_CHANGES_LIMIT } from '../changes-query.dto';
import { PagesAhead, type PageReads } from './change-stream-pages';
import { NDJSON, NdjsonWriter, StreamCut } from './ndjson-writer';

/** A refused stream may try again this soon: a stream runs for minutes, not milliseconds. */
export const STREAM_RETRY_AFTER_SECONDS = 5;
// The first page is small, so that the first line comes at once; then pages of the feed's largest,
// READ_AHEAD_PAGES of them read at once while no other workspace reads (change-stream-pages.ts),
// one at a time while another has within NEIGHBOURS_MS. Measured on the benchmark's 1,000,000
// companies (docs/benchmarks.md, "The change feeds and the stream"): 3 at once, 42.9 s for the
// whole stream, and a quiet workspace's page p99 9.9x its p99 alone; 2, 48.5 s and 5.0x; 1, 65.3 s
// and 2.2x. Each page's statement is CPU-bound, and the quiet workspace's statements share those
// two cores.
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

/** One stream: the feed's statements, the workspace, where to start, and the exchange. */
export interface StreamOptions {
  statements: StreamedFeed;
  workspaceId: string;
  /** A cursor of the feed, or none: from the start. */
  cursor: string | undefined;
  request: Request;
  response: Response;
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
  /** The streams running, per workspace. */
  private readonly streams = new KeyedCounter();
  observer: ChangeStreamObserver | undefined;

  constructor(
    environment: Environment,
    private readonly cursors: ChangeCursors,
    private readonly draining: Draining,
    private readonly database: Database,
    private readonly bodies: BodyBudget,
    @Inject(ROOT_LOGGER) private readonly logger: Logger,
  ) {
    this.maxMs = environment.CHANGE_STREAM_MAX_SECONDS * 1000;
    this.stallMs = environment.CHANGE_STREAM_STALL_SECONDS * 1000;
    this.perWorkspaceLimit = environment.MAX_CHANGE_STREAMS_PER_WORKSPACE;
    this.instanceLimit = environment.MAX_CHANGE_STREAMS;
  }

  /** Streams running on this instance, every workspace together (a metric). */
  get running(): number {
    return this.streams.total;
  }

  /**
   * Streams `feed` after `cursor` to the response, until caught up or the time bound. Throws
   * (before anything is sent) a 400 for a bad Accept or cursor, a 429 or 503 for the limits, a
   * 410 for an expired cursor; once the stream has begun, it ends it rather than throw.
   */
  async stream({
    statements,
    workspaceId,
    cursor,
    request,
    response,
  }: StreamOptions): Promise<void> {
    // Real time: the bound is the load balancers' and deploys' (not the clock tests move).
    const startedAt = performance.now();
    if (!request.accepts(NDJSON)) {
      throw new BadRequestException([`Accept must allow ${NDJSON}`]);
    }
    const { feed } = statements;
    const from = startOf(this.cursors, feed, workspaceId, cursor);
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
    const reads = this.pageReads(statements, workspaceId);
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

  /** A stream's statements, each in the workspace's turn, its pages through the body budget. */
  private pageReads(
    { feed, lines, range, boundaries }: StreamedFeed,
    workspaceId: string,
  ): PageReads {
    const database = this.database.forWorkspace(workspaceId);
    const room = { budget: this.bodies, key: `${feed}/stream:${workspaceId}` };
    const limit = MAX_CHANGES_LIMIT;
    return {
      page: (after, first = limit) =>
        readFeedRow(database, { sql: lines, workspaceId, after, limit: first, room }),
      range: (after, to) =>
        readFeedRow(database, { sql: range, workspaceId, after, limit, to, room }),
      boundaries: async (after) => {
        const ends = await database.query<Pick<FeedPosition, 'txid' | 'id'>>(boundaries, [
          workspaceId,
          after.txid,
          after.id,
          limit,
          BOUNDARIES_AHEAD,
        ]);
        return ends.map(({ txid, id }) => ({ txid, id, pass: after.pass }));
      },
    };
  }

  /** Counts the stream against its limits until `release`; throws its 429 or 503 when over. */
  private admit(workspaceId: string, response: Response): () => void {
    const workspaceFull = this.streams.of(workspaceId) >= this.perWorkspaceLimit;
    if (workspaceFull || this.streams.total >= this.instanceLimit) {
      response.setHeader('Retry-After', String(STREAM_RETRY_AFTER_SECONDS));
      if (workspaceFull) throw new StreamLimitException(this.perWorkspaceLimit);
      throw new StreamsSaturatedException();
    }
    return this.streams.acquire(workspaceId);
  }
}

function countLines(text: string): number {
  let count = 0;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) count++;
  return count;
}

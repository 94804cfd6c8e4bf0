import { Injectable } from '@nestjs/common';

/*
 * The heap that response bodies may take, bounded whatever the data and however many clients read
 * at once (docs/api.md, "Sizes"; docs/security.md, "Oversized data").
 *
 * A page's body is JSON text written by PostgreSQL and received whole as one JavaScript string,
 * which weighs up to 2 bytes per byte of UTF-8 (test/support/response-size.ts). Real pages are
 * small (a limit=200 page of companies is about 200 KB), but the bounds allow a page of 200
 * companies of 14.7 MB: the pool's 10 connections could then bring in 10 of them at once, 300 MB of heap for a
 * process that has 128 MiB. So every page statement is run sized (`sizedSql`): PostgreSQL returns
 * the body only if it is at most INLINE_BODY_BYTES, and its size in any case. A larger one is
 * read again once LARGE_BODIES_HEAP_BYTES has room for it (a body larger than that is read alone),
 * and the room is given back once the body has been handed to the response. The heap held by
 * bodies is thus at most 10 × 2 × INLINE_BODY_BYTES plus LARGE_BODIES_HEAP_BYTES (or one body
 * larger than that alone): 84 MiB. A key (endpoint and workspace) whose last body was large waits
 * for room (its size and a tenth more) before its first read, so that a workspace of large items
 * costs one read, not two.
 */

/**
 * Bodies up to this many bytes come back from the first read: a list page of ordinary data (200
 * companies are about 200 KB). A feed page of 1,000 ordinary companies (about 1.1 MB) goes through
 * the budget, which has room for dozens of them at once, and is read once as its key is remembered.
 */
export const INLINE_BODY_BYTES = 1024 * 1024;
/** The heap that larger bodies may hold at once. */
export const LARGE_BODIES_HEAP_BYTES = 64 * 1024 * 1024;
/**
 * A JavaScript string takes at most 2 bytes of heap per byte of its UTF-8
 * (test/support/response-size.ts).
 */
export const HEAP_BYTES_PER_BODY_BYTE = 2;
/** How long a large body may wait for room before the request is shed (503, Retry-After). */
export const LARGE_BODY_WAIT_MS = 15_000;
/** How many large bodies may wait at once; the next one is shed at once. */
export const MAX_LARGE_BODIES_WAITING = 100;
// Keys whose last body was large, remembered (the oldest forgotten first).
const REMEMBERED_KEYS = 1_000;
// A remembered key reserves for its last size and a tenth more: successive pages of a workspace
// (a sync's feed pages) differ a little, and one over its room would be read twice.
const REMEMBERED_MARGIN = 1.1;

/**
 * A statement that returns one row whose `column` is a response body (or part of one), rewritten
 * to return the body only when it is at most `$<capParameter>` bytes (any size when that is null),
 * and its size in bytes as `bytes` either way. The statement runs once (MATERIALIZED): the body
 * is written by PostgreSQL, measured, and sent or not.
 */
export function sizedSql(
  sql: string,
  column: string,
  otherColumns: string[],
  capParameter: number,
): string {
  const cap = `$${capParameter}::bigint`;
  const others = otherColumns.map((name) => `${name}, `).join('');
  return `WITH sized AS MATERIALIZED (
${sql}
)
SELECT ${others}CASE WHEN ${cap} IS NULL OR octet_length(${column}) <= ${cap}
    THEN ${column} END AS ${column},
  octet_length(${column}) AS bytes
FROM sized`;
}

/** Where a large body's heap is reserved, and under which key it is remembered. */
export interface BodyRoom {
  budget: BodyBudget;
  key: string;
}

/** A large body that waited too long for room, or found too many waiting: shed, like a full pool. */
export class LargeBodiesSaturatedError extends Error {
  // Answered as the pool's saturation is (database-errors.ts): 503 with `Retry-After: 1`.
  readonly code = 'POOL_SATURATED';

  constructor(reason: string) {
    super(`large response bodies saturated: ${reason}`);
    this.name = 'LargeBodiesSaturatedError';
  }
}

interface Waiter {
  heap: number;
  admit: () => void;
}

@Injectable()
export class BodyBudget {
  private held = 0;
  private readonly waiting: Waiter[] = [];
  private readonly large = new Map<string, number>();

  /** Heap currently held by large bodies, in bytes (a gauge of the metrics). */
  get heldBytes(): number {
    return this.held;
  }

  /**
   * Reads a row through a statement made by `sizedSql`: `read(cap)` runs it with the cap in
   * bytes, or none. Returns the row with its body; a body over INLINE_BODY_BYTES only with its
   * heap reserved, until the response has it.
   */
  async read<Row extends { bytes: number }>(
    key: string,
    read: (cap: number | null) => Promise<Row | undefined>,
    body: (row: Row) => string | null,
  ): Promise<Row | undefined> {
    let reserved = 0;
    try {
      const known = this.large.get(key);
      const room = known === undefined ? INLINE_BODY_BYTES : Math.ceil(known * REMEMBERED_MARGIN);
      if (known !== undefined) reserved = await this.reserve(room);
      let row = await read(room);
      if (row !== undefined && body(row) === null) {
        // Larger than there was room for: make room for its size, then read it again (a page
        // that grew in between, in those milliseconds, is read as it is: at most the largest).
        this.release(reserved);
        reserved = 0;
        reserved = await this.reserve(row.bytes);
        row = await read(null);
      }
      this.remember(key, row?.bytes ?? 0);
      return row;
    } finally {
      // The body is handed to the response (Express turns it into a Buffer, outside the heap) in
      // the continuations of this call, before the event loop turns: the room is given back then.
      if (reserved > 0) {
        const room = reserved;
        setImmediate(() => this.release(room));
      }
    }
  }

  private remember(key: string, bytes: number): void {
    this.large.delete(key);
    if (bytes <= INLINE_BODY_BYTES) return;
    this.large.set(key, bytes);
    if (this.large.size > REMEMBERED_KEYS) {
      const oldest = this.large.keys().next();
      if (!oldest.done) this.large.delete(oldest.value);
    }
  }

  /** Waits until the heap of a body of `bytes` fits (first come, first served); its amount. */
  private reserve(bytes: number): Promise<number> {
    // A body larger than the whole budget is read alone.
    const heap = Math.min(bytes * HEAP_BYTES_PER_BODY_BYTE, LARGE_BODIES_HEAP_BYTES);
    if (this.waiting.length === 0 && this.held + heap <= LARGE_BODIES_HEAP_BYTES) {
      this.held += heap;
      return Promise.resolve(heap);
    }
    if (this.waiting.length >= MAX_LARGE_BODIES_WAITING) {
      return Promise.reject(
        new LargeBodiesSaturatedError(`${this.waiting.length} large bodies already wait`),
      );
    }
    return new Promise<number>((resolve, reject) => {
      const waiter: Waiter = {
        heap,
        admit: () => {
          clearTimeout(timer);
          resolve(heap);
        },
      };
      const timer = setTimeout(() => {
        const index = this.waiting.indexOf(waiter);
        if (index >= 0) this.waiting.splice(index, 1);
        reject(new LargeBodiesSaturatedError(`no room within ${LARGE_BODY_WAIT_MS} ms`));
        // Those behind it may fit now.
        this.admitWaiting();
      }, LARGE_BODY_WAIT_MS);
      this.waiting.push(waiter);
    });
  }

  private release(heap: number): void {
    if (heap <= 0) return;
    this.held -= heap;
    this.admitWaiting();
  }

  private admitWaiting(): void {
    while (this.waiting.length > 0 && this.held + this.waiting[0].heap <= LARGE_BODIES_HEAP_BYTES) {
      const next = this.waiting.shift() as Waiter;
      this.held += next.heap;
      next.admit();
    }
  }
}

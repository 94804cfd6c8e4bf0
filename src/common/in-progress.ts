interface Entry<T> {
  item: T | undefined;
  previous: Entry<T>;
  next: Entry<T>;
}

/**
 * What is in progress now (the responses being answered), as a doubly linked list rather than a
 * `Set`: each request passes through it, and a long-lived `Set` kept every request it had held
 * within the old generation's reach after the request was over.
 *
 * Measured on Node 24 with the shipped flags (docs/benchmarks.md, "What keeps a request alive"),
 * `GET /v1/me` from ten connections after a full collection: with the
 * graceful shutdown's `Set` of responses, each young collection promoted a median 737 KB of
 * finished requests (49 KB without it), 14 full collections in 10 s instead of 2, 501 to 629 µs of
 * CPU per request instead of 429 to 437. Probably V8's: a `Set` whose table is rehashed keeps the
 * old table, entries and all, linked to the new one for the iterators under way, and an old table
 * that is itself garbage still holds, until the next full collection, what young collections
 * would have freed. Here an entry that leaves forgets its item and its neighbours: nothing old
 * points at a finished request.
 */
export class InProgress<T> implements Iterable<T> {
  /** Where the list's two ends meet: the first entry is `ends.next`, the last `ends.previous`. */
  private readonly ends = { item: undefined } as Entry<T>;
  private count = 0;

  constructor() {
    this.ends.previous = this.ends.next = this.ends;
  }

  get size(): number {
    return this.count;
  }

  /** Adds `item`; the returned function takes it out, once however often it is called. */
  add(item: T): () => void {
    const entry: Entry<T> = { item, previous: this.ends.previous, next: this.ends };
    entry.previous.next = entry;
    this.ends.previous = entry;
    this.count++;
    return () => {
      if (entry.next === entry) return;
      entry.previous.next = entry.next;
      entry.next.previous = entry.previous;
      // Out of the list, it points at nothing but itself.
      entry.item = undefined;
      entry.previous = entry.next = entry;
      this.count--;
    };
  }

  /** What was in progress when the iteration began, oldest first. */
  *[Symbol.iterator](): Iterator<T> {
    const items: T[] = [];
    for (let entry = this.ends.next; entry !== this.ends; entry = entry.next) {
      items.push(entry.item as T);
    }
    yield* items;
  }
}

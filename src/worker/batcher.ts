/** How long an item waits for others to share its statement: a bound on the bookkeeping's lag. */
export const BATCH_WINDOW_MS = 10;

/**
 * Gathers items that arrive within BATCH_WINDOW_MS of each other (or up to `maxItems`) and writes
 * them with one call; each `add` resolves, or rejects, with the write of its batch. The delivered
 * attempts of many endpoints are recorded in one statement this way (a statement per event delivers
 * 61 events/s on a loaded machine, docs/benchmarks.md, "Webhooks"), yet an attempt never waits for
 * a slower one to end, as it would if a batch of jobs were recorded with its slowest attempt.
 */
export class Batcher<T> {
  private items: T[] = [];
  private settles: { resolve: () => void; reject: (error: unknown) => void }[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly writes = new Set<Promise<void>>();

  constructor(
    private readonly write: (items: T[]) => Promise<void>,
    private readonly maxItems = 100,
  ) {}

  add(item: T): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.items.push(item);
      this.settles.push({ resolve, reject });
      if (this.items.length >= this.maxItems) this.flush();
      else this.timer ??= setTimeout(() => this.flush(), BATCH_WINDOW_MS);
    });
  }

  /** Writes what is gathered now, and waits for every write under way. */
  async drain(): Promise<void> {
    this.flush();
    await Promise.all(this.writes);
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.items.length === 0) return;
    const items = this.items;
    const settles = this.settles;
    this.items = [];
    this.settles = [];
    const write = this.write(items).then(
      () => settles.forEach(({ resolve }) => resolve()),
      (error: unknown) => settles.forEach(({ reject }) => reject(error)),
    );
    this.writes.add(write);
    void write.finally(() => this.writes.delete(write));
  }
}

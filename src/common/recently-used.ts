/**
 * A map that keeps at most `capacity` entries, forgetting the least recently used: for what is
 * made from a request's parameters (a statement's text per selection of fields), which a client
 * may vary without end, where what is forgotten is cheap to make again.
 */
export class RecentlyUsed<V> {
  private readonly entries = new Map<string, V>();

  constructor(private readonly capacity: number) {}

  /** The value kept under `key`, or the one `make` makes, kept as the most recently used. */
  get(key: string, make: () => V): V {
    let value = this.entries.get(key);
    if (value === undefined) value = make();
    else this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.capacity) {
      this.entries.delete(this.entries.keys().next().value as string);
    }
    return value;
  }

  get size(): number {
    return this.entries.size;
  }
}

/**
 * Counts what is in progress, per key (a workspace) and all keys together: each `acquire` holds
 * one place of its key until its release. A key is forgotten once it holds none, so the map
 * holds only the keys in progress now. The limits are the callers': they ask `of` and `total`.
 */
export class KeyedCounter {
  private readonly byKey = new Map<string, number>();
  private count = 0;

  /** Places held, every key together. */
  get total(): number {
    return this.count;
  }

  /** Places held by `key`. */
  of(key: string): number {
    return this.byKey.get(key) ?? 0;
  }

  /** Takes one place of `key`; the returned release gives it back, once however often called. */
  acquire(key: string): () => void {
    this.byKey.set(key, this.of(key) + 1);
    this.count++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.count--;
      const left = this.of(key) - 1;
      if (left === 0) this.byKey.delete(key);
      else this.byKey.set(key, left);
    };
  }
}

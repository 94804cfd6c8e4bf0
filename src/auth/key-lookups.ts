import { Injectable } from '@nestjs/common';
import { Database } from '../database/database';
import { MAX_WAITING, PRIORITY_CONNECTIONS } from '../database/pool-config';
import { PoolSaturatedError } from '../database/queryable';
import { type ApiKeyRow, findApiKeysByHash } from './api-keys.sql';

// One statement names at most this many keys (a bound on its parameter, not a tuning knob).
const MAX_KEYS_PER_STATEMENT = 500;

interface Waiting {
  resolve: (row: ApiKeyRow | undefined) => void;
  reject: (error: unknown) => void;
}

/**
 * The key lookups of concurrent requests, made together: a lookup goes out at once while fewer
 * than PRIORITY_CONNECTIONS statements are under way; otherwise it waits for the next one, which
 * looks up every key waiting then, in one statement. A burst of 400 requests is a handful of
 * statements instead of 400, each of which would have waited its turn at two connections behind
 * the others (measured: 20 workspaces at their in-flight limit, 400 lookups queued a second and
 * more, and a third of them got 503 for the pool's wait).
 *
 * Revocation stays immediate: a lookup joins only a statement not yet sent, whose snapshot is
 * taken after every request in it arrived, never one under way.
 */
@Injectable()
export class KeyLookups {
  private readonly waiting = new Map<string, Waiting[]>();
  private waitingRequests = 0;
  private underWay = 0;

  constructor(private readonly database: Database) {}

  /** The key of this hash and its workspace, if there is such a key. */
  find(hash: string): Promise<ApiKeyRow | undefined> {
    // As many as the pool's own queue would hold: beyond, the service is overloaded (503).
    if (this.waitingRequests >= MAX_WAITING) {
      return Promise.reject(new PoolSaturatedError(this.waitingRequests));
    }
    return new Promise((resolve, reject) => {
      const waiters = this.waiting.get(hash);
      if (waiters === undefined) this.waiting.set(hash, [{ resolve, reject }]);
      else waiters.push({ resolve, reject });
      this.waitingRequests++;
      this.send();
    });
  }

  private send(): void {
    while (this.underWay < PRIORITY_CONNECTIONS && this.waiting.size > 0) {
      const batch = new Map<string, Waiting[]>();
      for (const [hash, waiters] of this.waiting) {
        if (batch.size === MAX_KEYS_PER_STATEMENT) break;
        batch.set(hash, waiters);
        this.waiting.delete(hash);
        this.waitingRequests -= waiters.length;
      }
      void this.lookUp(batch);
    }
  }

  private async lookUp(batch: Map<string, Waiting[]>): Promise<void> {
    this.underWay++;
    try {
      const rows = await findApiKeysByHash(this.database, [...batch.keys()]);
      const found = new Map(rows.map((row) => [row.hash, row]));
      for (const [hash, waiters] of batch) {
        for (const waiter of waiters) waiter.resolve(found.get(hash));
      }
    } catch (error) {
      for (const waiters of batch.values()) for (const waiter of waiters) waiter.reject(error);
    } finally {
      this.underWay--;
      this.send();
    }
  }
}

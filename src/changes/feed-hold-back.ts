import type { Queryable } from '../database/queryable';
import { SAFE_BOUND_CTES } from './change-feed-sql';

/** The feeds' safe bound (change-feed-sql.ts) and where it would be with nothing running. */
const BOUND_SQL = `WITH ${SAFE_BOUND_CTES}
SELECT (SELECT xmin FROM bound)::text AS bound,
  pg_snapshot_xmax((SELECT taken FROM snapshot))::text AS xmax`;

/**
 * How long the change feeds have been held back by one running transaction, as seen at each call
 * (the metrics' scrapes): the feeds serve nothing committed after a transaction that is still
 * running started (docs/changes.md, "Latency"), so one that runs for minutes holds every feed
 * that long. 0 while the bound is where nothing running would put it; otherwise the time since a
 * call first saw the bound where it is now. From the calls alone, with no privilege to read other
 * roles' sessions: it lags by up to one interval between calls.
 */
export class FeedHoldBack {
  private held?: { bound: string; since: number };

  constructor(
    private readonly database: Queryable,
    private readonly now: () => number,
  ) {}

  async seconds(): Promise<number> {
    const [row] = await this.database.query<{ bound: string; xmax: string }>(BOUND_SQL, []);
    const now = this.now();
    if (row.bound === row.xmax) {
      this.held = undefined;
      return 0;
    }
    if (this.held?.bound !== row.bound) this.held = { bound: row.bound, since: now };
    return (now - this.held.since) / 1000;
  }
}

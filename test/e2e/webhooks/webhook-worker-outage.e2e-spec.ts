import pino from 'pino';
import { allowConnections, createTestDatabase, type TestDatabase } from '../../support/database';
import { testWorker } from '../../support/webhooks';
import { until } from '../../support/until';

/*
 * The webhook worker while its database is away: each failing step logs its first failure in
 * full and then backs off (at most one line a minute while the outage lasts), and logs its
 * recovery. Before, the dispatch logged a full stack at every interval (every 200 ms: 18,000
 * lines an hour); here, at the tests' interval of 50 ms, 60 lines in the 3 s below.
 *
 * The worker connects directly, even in the run behind PgBouncer: there the pooler holds a
 * statement while it cannot reach the database (up to its query_wait_timeout, 120 s by default)
 * instead of failing it, which is PgBouncer's behaviour, not the worker's.
 */
interface Line {
  level: number;
  msg: string;
  err?: { stack?: string };
}

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await allowConnections(database, true);
  await database.drop();
});

it('backs off while the database is away, logging each failure once, then its recovery', async () => {
  const lines: Line[] = [];
  const logger = pino(
    { level: 'info' },
    { write: (line: string) => void lines.push(JSON.parse(line) as Line) },
  );
  const worker = testWorker(database.directUrl, { logger, dispatchIntervalMs: 50 });
  await worker.start();
  try {
    await allowConnections(database, false);
    await until('the first failure', () =>
      lines.some((line) => line.msg === 'webhook dispatch failed; retrying with backoff'),
    );
    await new Promise((resolve) => setTimeout(resolve, 3_000));

    // At most one line per step (the dispatch, fetching jobs, putting them back, pg-boss's
    // maintenance), each in full with its stack, and nothing more within the minute.
    const failures = lines.filter((line) => line.level >= 40);
    const messages = failures.map((line) => line.msg);
    expect(new Set(messages).size).toBe(messages.length);
    expect(messages.length).toBeLessThanOrEqual(4);
    for (const line of failures) expect(line.err?.stack).toBeDefined();

    await allowConnections(database, true);
    await until('the recovery', () =>
      lines.some((line) => line.msg === 'webhook dispatch recovered'),
    );
  } finally {
    await worker.stop();
  }
});

import { within } from '../common/within';

// A scrape collects its gauges one by one: one reading serves all of them if they ask within this.
const REUSE_MS = 1_000;
// A scrape never hangs on a database that does not answer (behind PgBouncer a statement waits for
// the database instead of failing): past this, the reading has failed. As the readiness probes.
const TIMEOUT_MS = 2_000;

/**
 * What several gauges read from the database at a scrape, read once: `read()` at most every
 * second, its result or undefined when it failed or took more than 2 seconds.
 */
export function scrapeReading<T>(
  read: () => Promise<T>,
  now: () => number = Date.now,
): () => Promise<T | undefined> {
  let last: { at: number; reading: Promise<T | undefined> } | undefined;
  return () => {
    const at = now();
    if (last === undefined || at - last.at > REUSE_MS) {
      last = { at, reading: withinTimeout(read()) };
    }
    return last.reading;
  };
}

async function withinTimeout<T>(reading: Promise<T>): Promise<T | undefined> {
  try {
    const outcome = await within(reading, TIMEOUT_MS);
    return outcome.done ? outcome.value : undefined;
  } catch {
    return undefined;
  }
}

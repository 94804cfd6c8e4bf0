const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** The delay after the 1st, 2nd, ... failure: about three days in all, then the event is given up. */
export const RETRY_DELAYS_MS: readonly number[] = [
  5 * SECOND,
  5 * MINUTE,
  30 * MINUTE,
  2 * HOUR,
  5 * HOUR,
  10 * HOUR,
  14 * HOUR,
  20 * HOUR,
  24 * HOUR,
];

/** Up to 20% more than the step, so that the retries of an outage's backlog do not all land at once. */
const JITTER = 0.2;

/**
 * Delay before the attempt that follows `failedAttempts` failures (1-based), or null to give up.
 * `random` returns [0, 1) (Math.random). A `Retry-After` from the receiver (on a 429 or 503) is
 * waited at least, capped at the next step's delay (the last step's own for the last failure):
 * a receiver can slow its retries down, but one answer cannot park an event for days.
 */
export function retryDelayMs(
  failedAttempts: number,
  random: () => number,
  retryAfterMs?: number,
): number | null {
  if (!Number.isInteger(failedAttempts) || failedAttempts < 1) {
    throw new RangeError(`failedAttempts is a positive integer, got ${failedAttempts}`);
  }
  const step = RETRY_DELAYS_MS[failedAttempts - 1];
  if (step === undefined) return null;
  const jittered = Math.round(step * (1 + JITTER * random()));
  if (retryAfterMs === undefined) return jittered;
  const cap = RETRY_DELAYS_MS[failedAttempts] ?? step;
  return Math.max(jittered, Math.min(Math.ceil(retryAfterMs), cap));
}

import type { Logger } from 'pino';

// While a step keeps failing, one line a minute says it still does.
const STILL_FAILING_LOG_MS = 60_000;

export interface RetryPacingOptions {
  /** The wait after the first failure; it doubles with each failure after it. */
  baseMs: number;
  /** The longest wait between two tries. */
  maxMs: number;
  now: () => number;
  random: () => number;
}

/**
 * The pace and the log of a step of the worker that is retried while it fails (the dispatch,
 * fetching jobs): while the database is away, a wait that doubles from `baseMs` up to `maxMs`, half
 * of it random so that several workers do not retry in step; the first failure logged in full,
 * with its stack, then one line a minute while it lasts; the recovery logged once. A database
 * that went away for an hour made 18,000 error lines of the same stack without it.
 */
export class RetryPacing {
  private failures = 0;
  private failingSince = 0;
  private loggedAt = 0;

  constructor(
    private readonly step: string,
    private readonly logger: Logger,
    private readonly options: RetryPacingOptions,
  ) {}

  /** After a failure: logs it as above, and says how long to wait before the next try (ms). */
  failed(error: unknown): number {
    const now = this.options.now();
    this.failures++;
    if (this.failures === 1) {
      this.failingSince = now;
      this.loggedAt = now;
      this.logger.error({ err: error }, `${this.step} failed; retrying with backoff`);
    } else if (now - this.loggedAt >= STILL_FAILING_LOG_MS) {
      this.loggedAt = now;
      this.logger.warn(
        { failures: this.failures, failingForMs: now - this.failingSince, error: messageOf(error) },
        `${this.step} still failing; retrying`,
      );
    }
    const { baseMs, maxMs, random } = this.options;
    const ceiling = Math.min(maxMs, baseMs * 2 ** Math.min(this.failures - 1, 30));
    return ceiling / 2 + (random() * ceiling) / 2;
  }

  /** After a success: the recovery, logged once after failures. */
  succeeded(): void {
    if (this.failures === 0) return;
    this.logger.info(
      { failures: this.failures, failingForMs: this.options.now() - this.failingSince },
      `${this.step} recovered`,
    );
    this.failures = 0;
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

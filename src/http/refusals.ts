import { HttpException, HttpStatus } from '@nestjs/common';
import type { RefusalReason } from '../logging/refusal-reason';

/**
 * A capacity limit's refusal whose message the service wrote (nothing of the caller's in it), and
 * the limit that refused, for the log line and the metrics.
 */
export abstract class LimitRefusal extends HttpException {
  abstract readonly reason: RefusalReason;
}

/**
 * A request refused by the in-flight limit may try again this soon: requests of 10 to 500 ms will
 * have ended by then.
 */
export const IN_FLIGHT_RETRY_AFTER_SECONDS = 1;

/** The in-flight limit's 429: its own message, distinct from the per-minute limit's. */
export class InFlightLimitException extends LimitRefusal {
  readonly reason = 'in_flight_limit';

  constructor(limit: number) {
    super(
      `Too many requests in progress for this workspace: at most ${limit} at a time`,
      HttpStatus.TOO_MANY_REQUESTS,
    );
  }
}

/** The 429 of a workspace with its most change streams running on this instance. */
export class StreamLimitException extends LimitRefusal {
  readonly reason = 'stream_limit';

  constructor(limit: number) {
    super(
      `Too many change streams in progress for this workspace: at most ${limit} at a time`,
      HttpStatus.TOO_MANY_REQUESTS,
    );
  }
}

/** The 503 of an instance with its most change streams running: the service's own capacity. */
export class StreamsSaturatedException extends LimitRefusal {
  readonly reason = 'overload';

  constructor() {
    super('Service temporarily unavailable', HttpStatus.SERVICE_UNAVAILABLE);
  }
}

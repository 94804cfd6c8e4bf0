import { HttpException, HttpStatus } from '@nestjs/common';

/** The in-flight limit's 429: its own message, distinct from the per-minute limit's. */
export class InFlightLimitException extends HttpException {
  constructor(limit: number) {
    super(
      `Too many requests in progress for this workspace: at most ${limit} at a time`,
      HttpStatus.TOO_MANY_REQUESTS,
    );
  }
}

import { HttpException, HttpStatus } from '@nestjs/common';
import type { ServerResponse } from 'node:http';

/**
 * Why a request was refused for capacity rather than for what it asked: its workspace had too many
 * requests in progress (429), its key or address spent its per-minute budget (429), or the service
 * itself was overloaded (503). The request log and the metrics say which.
 */
export type RefusalReason = 'in_flight_limit' | 'rate_limit' | 'overload';

const REFUSAL = Symbol('refusal');

type Marked = ServerResponse & { [REFUSAL]?: RefusalReason };

export function markRefusal(response: ServerResponse, reason: RefusalReason): void {
  (response as Marked)[REFUSAL] = reason;
}

export function refusalOf(response: ServerResponse): RefusalReason | undefined {
  return (response as Marked)[REFUSAL];
}

/** The in-flight limit's 429: its own message, distinct from the per-minute limit's. */
export class InFlightLimitException extends HttpException {
  constructor(limit: number) {
    super(
      `Too many requests in progress for this workspace: at most ${limit} at a time`,
      HttpStatus.TOO_MANY_REQUESTS,
    );
  }
}

import type { ServerResponse } from 'node:http';

/**
 * Why a request was refused for capacity rather than for what it asked: its workspace had too many
 * requests in progress (429) or change streams running (429), its key or address spent its
 * per-minute budget (429), or the service itself was overloaded (503). The request log and the
 * metrics say which.
 */
export type RefusalReason = 'in_flight_limit' | 'stream_limit' | 'rate_limit' | 'overload';

const REFUSAL = Symbol('refusal');

type Marked = ServerResponse & { [REFUSAL]?: RefusalReason };

export function markRefusal(response: ServerResponse, reason: RefusalReason): void {
  (response as Marked)[REFUSAL] = reason;
}

export function refusalOf(response: ServerResponse): RefusalReason | undefined {
  return (response as Marked)[REFUSAL];
}

import type { ServerResponse } from 'node:http';

/**
 * How a change stream ended: caught up (`completed`), at changes held back by an older transaction
 * (`held_back`), at its time bound (`time_limit`), the instance shutting down (`shutdown`), a
 * statement failing (`error`: these five with their last line), or cut without it: its reader
 * left (`client_gone`) or took nothing for too long (`stalled`).
 */
export type StreamEnd =
  'completed' | 'held_back' | 'time_limit' | 'shutdown' | 'error' | 'client_gone' | 'stalled';

/** What a change stream sent, for its request's log line: read when the line is written. */
export interface StreamOutcome {
  changes: number;
  bytes: number;
  ended: StreamEnd;
}

const STREAM = Symbol('stream');

type Marked = ServerResponse & { [STREAM]?: () => StreamOutcome };

/** The response is a change stream; `outcome` says what it sent, whenever asked. */
export function markStream(response: ServerResponse, outcome: () => StreamOutcome): void {
  (response as Marked)[STREAM] = outcome;
}

export function streamOf(response: ServerResponse): StreamOutcome | undefined {
  return (response as Marked)[STREAM]?.();
}

export interface HeaderSink {
  setHeader(name: string, value: string | number): unknown;
}

export interface RateLimitState {
  limit: number;
  remaining: number;
  /** Whole seconds until the window resets. */
  resetSeconds: number;
}

/** The contract's headers; a 429 (remaining 0) also gets Retry-After. */
export function setRateLimitHeaders(response: HeaderSink, state: RateLimitState): void {
  const reset = Math.max(1, Math.ceil(state.resetSeconds));
  response.setHeader('X-RateLimit-Limit', state.limit);
  response.setHeader('X-RateLimit-Remaining', Math.max(0, state.remaining));
  response.setHeader('X-RateLimit-Reset', reset);
  if (state.remaining <= 0) response.setHeader('Retry-After', reset);
}

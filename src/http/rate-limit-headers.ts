export interface HeaderSink {
  setHeader(name: string, value: string | number): unknown;
  getHeader(name: string): unknown;
}

export interface RateLimitState {
  limit: number;
  remaining: number;
  /** Whole seconds until the window resets. */
  resetSeconds: number;
}

/**
 * The names of this service's limits in the IETF headers (draft-ietf-httpapi-ratelimit-headers,
 * `RateLimit-Policy` and `RateLimit`): each a quota policy, named as a String item.
 */
export type RateLimitPolicy = 'per-minute' | 'auth-failures' | 'in-flight';

/** The per-minute windows (the key's budget, the address's failures) last a minute. */
const WINDOW_SECONDS = 60;

/**
 * The contract's headers (`X-RateLimit-*`) and the IETF draft's (`RateLimit-Policy`,
 * `RateLimit`) for a per-minute limit; a refusal (a 429) also gets Retry-After.
 */
export function setRateLimitHeaders(
  response: HeaderSink,
  state: RateLimitState,
  { policy = 'per-minute', refused = false }: { policy?: RateLimitPolicy; refused?: boolean } = {},
): void {
  const reset = Math.max(1, Math.ceil(state.resetSeconds));
  const remaining = Math.max(0, state.remaining);
  response.setHeader('X-RateLimit-Limit', state.limit);
  response.setHeader('X-RateLimit-Remaining', remaining);
  response.setHeader('X-RateLimit-Reset', reset);
  if (refused) response.setHeader('Retry-After', reset);
  addListMember(response, 'RateLimit-Policy', `"${policy}";q=${state.limit};w=${WINDOW_SECONDS}`);
  addListMember(response, 'RateLimit', `"${policy}";r=${remaining};t=${reset}`);
}

/**
 * The workspace's in-flight limit in the IETF headers: a quota of concurrent requests (the
 * draft's `qu="concurrent-requests"`, no window), and how many more may start now.
 */
export function setInFlightHeaders(response: HeaderSink, limit: number, remaining: number): void {
  addListMember(response, 'RateLimit-Policy', `"in-flight";q=${limit};qu="concurrent-requests"`);
  addListMember(response, 'RateLimit', `"in-flight";r=${Math.max(0, remaining)}`);
}

/**
 * Both fields are Structured Field Lists (RFC 9651): one policy's member added to what another
 * limit already set, on one field line; a member of the same policy is replaced (a 304's refund
 * states the budget again).
 */
function addListMember(response: HeaderSink, name: string, member: string): void {
  const policy = member.slice(0, member.indexOf(';') + 1);
  const current = response.getHeader(name);
  const others =
    typeof current === 'string' ? current.split(', ').filter((m) => !m.startsWith(policy)) : [];
  response.setHeader(name, [...others, member].join(', '));
}

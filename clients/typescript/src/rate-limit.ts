/**
 * The service's limits as the IETF draft's fields state them (draft-ietf-httpapi-ratelimit-headers:
 * `RateLimit-Policy` and `RateLimit`, each a Structured Field List with one member per limit):
 * `"per-minute"` (the key's budget), `"in-flight"` (the workspace's requests in progress, a quota
 * of concurrent requests) and, on the 429 of an address past its failed authentications,
 * `"auth-failures"`.
 */
export interface RateLimitPolicy {
  name: string;
  /** The quota: requests per window, or requests at a time. */
  quota: number;
  /** The window in seconds; absent for a quota of concurrent requests. */
  windowSeconds?: number;
  /** `requests` unless the server said otherwise (`concurrent-requests`). */
  unit: string;
}

export interface RateLimitState {
  name: string;
  remaining: number;
  /** Seconds until the quota resets; absent for a quota of concurrent requests. */
  resetSeconds?: number;
}

export interface RateLimits {
  policies: RateLimitPolicy[];
  states: RateLimitState[];
}

/** Both fields of a response, read; members this parser cannot read are skipped, not guessed. */
export function parseRateLimits(headers: Headers): RateLimits {
  const policies = members(headers.get('ratelimit-policy')).flatMap(({ name, parameters }) => {
    const quota = integer(parameters.q);
    if (quota === undefined) return [];
    const windowSeconds = integer(parameters.w);
    const unit = parameters.qu === undefined ? 'requests' : unquote(parameters.qu);
    return [{ name, quota, unit, ...(windowSeconds !== undefined && { windowSeconds }) }];
  });
  const states = members(headers.get('ratelimit')).flatMap(({ name, parameters }) => {
    const remaining = integer(parameters.r);
    if (remaining === undefined) return [];
    const resetSeconds = integer(parameters.t);
    return [{ name, remaining, ...(resetSeconds !== undefined && { resetSeconds }) }];
  });
  return { policies, states };
}

/** `"name";a=1;b="x", "other";c=2`: the members of a List whose items are Strings. */
function members(field: string | null): { name: string; parameters: Record<string, string> }[] {
  if (field === null) return [];
  const found: { name: string; parameters: Record<string, string> }[] = [];
  // Items are quoted Strings, parameters key=value (a value may be a quoted String).
  const member =
    /\s*"((?:[^"\\]|\\.)*)"((?:\s*;\s*[a-z*][a-z0-9_.*-]*(?:=(?:"(?:[^"\\]|\\.)*"|[^;,\s]+))?)*)\s*(?:,|$)/gy;
  let match: RegExpExecArray | null;
  while ((match = member.exec(field)) !== null && match[0] !== '') {
    const [, name = '', list = ''] = match;
    const parameters: Record<string, string> = {};
    for (const [, key = '', value] of list.matchAll(
      /;\s*([a-z*][a-z0-9_.*-]*)(?:=("(?:[^"\\]|\\.)*"|[^;,\s]+))?/g,
    )) {
      parameters[key] = value ?? '?1';
    }
    found.push({ name: unquote(`"${name}"`), parameters });
    if (member.lastIndex >= field.length) break;
  }
  return found;
}

function integer(value: string | undefined): number | undefined {
  return value !== undefined && /^\d{1,15}$/.test(value) ? Number(value) : undefined;
}

function unquote(value: string): string {
  return value.startsWith('"') ? value.slice(1, -1).replace(/\\(.)/g, '$1') : value;
}

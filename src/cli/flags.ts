import { Plan } from '../generated/prisma/enums';
import { isScope, type Scope, SCOPES } from '../auth/scopes';
import { parseIsoDateTime } from '../http/iso-date-time';
import { UsageError } from './cli-output';

/*
 * Parsers of flag values, run by commander as it reads the command line: a bad value stops the
 * command before it touches the database, with a message naming the flag.
 */
const PLANS = Object.values(Plan);
const WORKSPACE_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

export function text(flag: string, value: string): string {
  const trimmed = value.trim();
  if (trimmed === '') throw new UsageError(`${flag} must not be empty`);
  return trimmed;
}

export function plan(value: string): Plan {
  if (!PLANS.includes(value as Plan)) {
    throw new UsageError(`--plan must be ${PLANS.join(' or ')}, not ${JSON.stringify(value)}`);
  }
  return value as Plan;
}

export function boolean(flag: string, value: string): boolean {
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new UsageError(`${flag} must be true or false, not ${JSON.stringify(value)}`);
}

export function workspaceId(value: string): string {
  if (!WORKSPACE_ID.test(value)) {
    throw new UsageError(
      `--id must be 1 to 64 letters, digits, "_" or "-" starting with a letter or digit, not ${JSON.stringify(value)}`,
    );
  }
  return value;
}

/** A comma-separated list of ids (`a,b,c`); a repeated flag adds to the list. */
export function idList(flag: string, value: string, previous: string[] = []): string[] {
  const ids = value.split(',').map((id) => id.trim());
  if (ids.some((id) => id === '')) {
    throw new UsageError(
      `${flag} must be a comma-separated list of ids without empty entries, not ${JSON.stringify(value)}`,
    );
  }
  return [...previous, ...ids];
}

const MAX_DAYS = 36_500;

/** A whole number of days, 1 or more (and at most a century, which keeps dates in range). */
export function days(flag: string, value: string): number {
  const n = /^\d+$/.test(value) ? Number(value) : NaN;
  if (!(n >= 1 && n <= MAX_DAYS)) {
    throw new UsageError(
      `${flag} must be a whole number of days from 1 to ${MAX_DAYS}, not ${JSON.stringify(value)}`,
    );
  }
  return n;
}

const DURATION = /^(\d{1,9})(s|m|h|d)$/;
const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** A whole number with a unit, `s`, `m`, `h` or `d` (`30s`, `15m`, `24h`, `90d`), in ms, above 0. */
export function duration(flag: string, value: string): number {
  const match = DURATION.exec(value);
  const ms = match ? Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS] : 0;
  if (!(ms > 0 && ms <= MAX_DAYS * UNIT_MS.d)) {
    throw new UsageError(
      `${flag} must be a whole number with a unit s, m, h or d (30s, 15m, 24h, 90d), not ${JSON.stringify(value)}`,
    );
  }
  return ms;
}

/** An ISO 8601 date-time (without an offset it is UTC), as the API's `since` reads it. */
export function dateTime(flag: string, value: string): Date {
  const date = parseIsoDateTime(value);
  if (date === null) {
    throw new UsageError(
      `${flag} must be an ISO 8601 date-time such as 2027-01-31T00:00:00Z, not ${JSON.stringify(value)}`,
    );
  }
  return date;
}

/** A comma-separated list of scopes, at least one, each one of SCOPES. */
export function scopes(flag: string, value: string): Scope[] {
  const given = value.split(',').map((scope) => scope.trim());
  const unknown = given.filter((scope) => !isScope(scope));
  // split always gives one entry at least: an empty value is one unknown scope.
  if (unknown.length > 0) {
    throw new UsageError(
      `${flag} must be a comma-separated list of ${SCOPES.join(', ')}, not ${JSON.stringify(value)}`,
    );
  }
  return [...new Set(given as Scope[])];
}

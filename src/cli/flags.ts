import { Plan } from '../generated/prisma/enums';
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

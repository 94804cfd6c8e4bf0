import type { ClientBase } from 'pg';
import { StartupError } from '../common/startup-error';

/**
 * The PostgreSQL majors this service supports, each run by CI (.ci/run: the whole suite on the
 * oldest and the newest, a core set on those between). 15 is the oldest major the PostgreSQL
 * project still maintains (14's support ended in November 2026); 18 is the newest released.
 */
export const POSTGRES_MAJORS = { oldest: 15, newest: 18 } as const;

const RANGE = `${POSTGRES_MAJORS.oldest} to ${POSTGRES_MAJORS.newest}`;

export type ServerVersionVerdict =
  { kind: 'supported' } | { kind: 'older'; message: string } | { kind: 'newer'; message: string };

/**
 * What a server of `versionNumber` (`server_version_num`, e.g. 180004) means for a start. Older
 * than the range: refused, since nothing below it is tested and it no longer gets fixes. Newer:
 * a warning, not a refusal, because an upgrade of the database must not take the API down and
 * PostgreSQL keeps what this service uses from one major to the next; the operator is told that
 * this pair is untested. `version` is the server's own name for itself (`server_version`).
 */
export function judgeServerVersion(versionNumber: number, version: string): ServerVersionVerdict {
  const major = Math.floor(versionNumber / 10_000);
  const named = `PostgreSQL ${version.split(' ')[0]}`;
  if (major < POSTGRES_MAJORS.oldest) {
    return {
      kind: 'older',
      message:
        `${named} is older than this service supports (PostgreSQL ${RANGE}): ` +
        `upgrade the server to ${POSTGRES_MAJORS.oldest} or later`,
    };
  }
  if (major > POSTGRES_MAJORS.newest) {
    return {
      kind: 'newer',
      message: `${named} is newer than this service is tested on (PostgreSQL ${RANGE}); starting anyway`,
    };
  }
  return { kind: 'supported' };
}

/**
 * Asks the server its version: throws a StartupError below the range, passes a warning to `warn`
 * above it. A simple-protocol statement, which PgBouncer in transaction mode passes through.
 */
export async function checkServerVersion(
  client: ClientBase,
  warn: (message: string) => void,
): Promise<void> {
  const { rows } = await client.query<{ number: number; version: string }>(
    "SELECT current_setting('server_version_num')::int AS number, current_setting('server_version') AS version",
  );
  const verdict = judgeServerVersion(rows[0].number, rows[0].version);
  if (verdict.kind === 'older') throw new StartupError(verdict.message);
  if (verdict.kind === 'newer') warn(verdict.message);
}

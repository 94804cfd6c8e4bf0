import type { Queryable } from '../database/queryable';
import type { Plan } from '../generated/prisma/enums';

/**
 * Keys and their workspaces, found by the keys' hashes ($1, an array) through the unique index:
 * one round trip for the key checks of every request waiting for one (key-lookups.ts), where
 * Prisma's relation query would make two per request. The benchmark's bare server runs it too.
 */
export const API_KEY_BY_HASH_SQL = `SELECT k.hash, k.id, k.last_used_at AS "lastUsedAt", k.revoked_at AS "revokedAt",
  k.expires_at AS "expiresAt", k.scopes, w.id AS "workspaceId", w.name AS "workspaceName", w.plan, w.suspended
FROM api_keys k JOIN workspaces w ON w.id = k.workspace_id
WHERE k.hash = ANY($1::text[])`;

/**
 * Marks keys used ($1, their ids) at their times ($2), each unless it was marked within the last
 * $3 milliseconds: conditional, so that concurrent requests and instances write a key once
 * between them. Rows another transaction holds (another instance marking the same key, an admin
 * revoking it) are skipped rather than waited for: the statement never waits on a row lock, so two
 * instances marking the same keys in different orders cannot deadlock. Returns the rows it wrote.
 */
export const API_KEY_RECORD_USES_SQL = `UPDATE api_keys k SET last_used_at = u.used_at
FROM unnest($1::text[], $2::timestamptz[]) AS u(id, used_at)
WHERE k.id = u.id
  AND k.id IN (SELECT id FROM api_keys WHERE id = ANY($1::text[]) FOR UPDATE SKIP LOCKED)
  AND (k.last_used_at IS NULL OR k.last_used_at < u.used_at - $3::integer * interval '1 millisecond')
RETURNING k.id`;

export interface ApiKeyRow {
  hash: string;
  id: string;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  expiresAt: Date | null;
  /** Empty: every scope. */
  scopes: string[];
  workspaceId: string;
  workspaceName: string;
  plan: Plan;
  suspended: boolean;
}

/** The keys of these hashes and their workspaces: one row per hash that is a key's. */
export async function findApiKeysByHash(
  database: Queryable,
  hashes: string[],
): Promise<ApiKeyRow[]> {
  return database.query<ApiKeyRow>(API_KEY_BY_HASH_SQL, [hashes]);
}

/** Marks the keys used, each at its time, unless marked within `resolutionMs` before it. */
export async function recordApiKeyUses(
  database: Queryable,
  uses: ReadonlyMap<string, Date>,
  resolutionMs: number,
): Promise<void> {
  await database.query(API_KEY_RECORD_USES_SQL, [
    [...uses.keys()],
    [...uses.values()],
    resolutionMs,
  ]);
}

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
 * Marks a key used at $2 unless it was marked since $3: conditional, so that concurrent requests
 * and instances write it once between them. Returns the row it wrote, if any.
 */
export const API_KEY_RECORD_USE_SQL = `UPDATE api_keys SET last_used_at = $2
WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $3)
RETURNING id`;

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

/** Marks the key used at `now` unless it was marked since `staleBefore`. */
export async function recordApiKeyUse(
  database: Queryable,
  id: string,
  now: Date,
  staleBefore: Date,
): Promise<void> {
  await database.query(API_KEY_RECORD_USE_SQL, [id, now, staleBefore]);
}

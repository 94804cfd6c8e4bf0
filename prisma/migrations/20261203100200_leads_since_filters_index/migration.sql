-- As companies_workspace_last_seen_filters_idx (migration 20261203100000), for the leads list:
-- `since` (createdAt) with a filter counts the `since` range of this index alone. It replaces
-- leads_workspace_created_at_idx, dropped by the next migration.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "leads_workspace_created_at_filters_idx" ON "leads" ("workspace_id", "created_at") INCLUDE ("intent_score", "id", "intent_level", "status", "assigned_to_id");

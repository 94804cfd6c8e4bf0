-- Made redundant by companies_workspace_last_seen_filters_idx (the previous migration): the same
-- key, and its included columns among the new one's. Dropped without blocking reads.
DROP INDEX CONCURRENTLY IF EXISTS "companies_workspace_last_seen_idx";

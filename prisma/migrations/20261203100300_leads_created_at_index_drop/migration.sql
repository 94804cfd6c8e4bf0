-- Made redundant by leads_workspace_created_at_filters_idx (the previous migration).
DROP INDEX CONCURRENTLY IF EXISTS "leads_workspace_created_at_idx";

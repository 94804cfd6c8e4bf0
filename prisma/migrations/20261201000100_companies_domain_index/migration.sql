-- `domain=` (the function and its reasons: migration 20261201000000_company_lookups). One
-- statement, outside a transaction: the runner's rules for CONCURRENTLY.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "companies_workspace_domain_idx" ON "companies" ("workspace_id", domain_key("domain"));

-- `q=`: the trigrams of a company's name and domain, joined by U+001F as the filter's SQL joins
-- them (src/items/filters.ts, containsText), which a `q` cannot hold: no match straddles the two.
-- The workspace first (btree_gin), so that the index yields one workspace's matches only.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "companies_search_idx" ON "companies" USING gin ("workspace_id", ("name" || E'\x1f' || "domain") gin_trgm_ops);

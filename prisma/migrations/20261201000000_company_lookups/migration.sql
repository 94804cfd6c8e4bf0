-- The companies list's lookups (docs/api.md, "Lookups"): `domain` and `q`. Their indexes are built
-- by the two migrations that follow, concurrently, so that a large table stays readable and
-- writable during the builds (src/database/concurrent-index.ts).

-- Trigram indexes, for `q` (a substring, case aside: ILIKE), and btree_gin, so that the trigram
-- index starts with the workspace: a small workspace's `q` then reads its own matches only, not
-- every workspace's (measured on the benchmark's data, a 5,000-company workspace among 2,000,000
-- companies: 8 ms instead of 50 for `q=data`, whose trigrams 150,000 companies have). Both are
-- part of PostgreSQL's contrib (Debian's postgresql-15, the embedded-postgres packages) and
-- trusted extensions since PostgreSQL 13: a role with CREATE on the database (its owner) may
-- create them, no superuser needed (README, "Database and migrations").
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE EXTENSION IF NOT EXISTS btree_gin;

-- A domain as `domain=` compares it: case aside, without one leading `www.` nor a trailing dot
-- (`WWW.Acme.com.` is `acme.com`). Both the index and the filter's values go through it, so that
-- case is folded the same way on both sides (by the database's collation). lower() and
-- regexp_replace() are immutable, and so is this.
CREATE FUNCTION domain_key(domain TEXT) RETURNS TEXT
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT regexp_replace(lower(domain), '^www\.|\.$', '', 'g') $$;

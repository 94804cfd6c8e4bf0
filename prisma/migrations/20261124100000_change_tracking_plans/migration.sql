-- Change tracking planned for the rows at hand.
--
-- PL/pgSQL prepares each query of a function once per session and reuses its plan. A trigger's
-- queries over transition tables were thus planned for the row counts of their first run in the
-- session: an upsert that updates nothing still fires the UPDATE trigger, with empty transition
-- tables, and the plan made then (nested loops over the tuplestores) was reused for a statement of
-- thousands of rows. Measured: a no-change UPDATE of 5,001 contacts took 25.3 s after an empty
-- UPDATE in the same session, 0.30 s in a fresh one (2,000 rows: 2.3 s, quadratic). The queries
-- now run through EXECUTE, planned at each run for its transition tables (planning costs well
-- under a millisecond per statement, once per statement, not per row).
-- test/change-tracking-plans.e2e-spec.ts pins it.
--
-- The same functions as in 20261124000000_change_feeds otherwise, query for query.

CREATE OR REPLACE FUNCTION "company_changes_track"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        EXECUTE $q$
        SELECT "record_company_changes"(array_agg("workspace_id"), array_agg("id"), false) FROM "new_rows"
        $q$;
    ELSIF TG_OP = 'DELETE' THEN
        -- Contacts and leads go with the company, by the foreign keys' cascade; the leads' own
        -- trigger records their deletions.
        EXECUTE $q$
        SELECT "record_company_changes"(array_agg("workspace_id"), array_agg("id"), true) FROM "old_rows"
        $q$;
    ELSE
        EXECUTE $q$
        SELECT "record_company_changes"(array_agg(o."workspace_id"), array_agg(o."id"), true)
        FROM "old_rows" o
        WHERE NOT EXISTS (SELECT FROM "new_rows" n WHERE n."id" = o."id" AND n."workspace_id" = o."workspace_id")
        $q$;
        EXECUTE $q$
        SELECT "record_company_changes"(array_agg(n."workspace_id"), array_agg(n."id"), false)
        FROM "new_rows" n
        LEFT JOIN "old_rows" o ON o."id" = n."id" AND o."workspace_id" = n."workspace_id"
        WHERE o."id" IS NULL OR o IS DISTINCT FROM n
        $q$;
        -- A lead embeds its company's name.
        EXECUTE $q$
        SELECT "record_lead_changes"(array_agg(l."workspace_id"), array_agg(l."id"), false)
        FROM "new_rows" n
        JOIN "old_rows" o ON o."id" = n."id" AND o."workspace_id" = n."workspace_id"
        JOIN "leads" l ON l."company_id" = n."id" AND l."workspace_id" = n."workspace_id"
        WHERE o."name" IS DISTINCT FROM n."name"
        $q$;
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION "contact_changes_track"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        EXECUTE $q$
        SELECT "record_company_changes"(array_agg(c."workspace_id"), array_agg(c."id"), false)
        FROM "companies" c
        WHERE (c."id", c."workspace_id") IN (SELECT "company_id", "workspace_id" FROM "new_rows")
        $q$;
    ELSIF TG_OP = 'DELETE' THEN
        EXECUTE $q$
        SELECT "record_company_changes"(array_agg(c."workspace_id"), array_agg(c."id"), false)
        FROM "companies" c
        WHERE (c."id", c."workspace_id") IN (SELECT "company_id", "workspace_id" FROM "old_rows")
        $q$;
    ELSE
        EXECUTE $q$
        SELECT "record_company_changes"(array_agg(c."workspace_id"), array_agg(c."id"), false)
        FROM "companies" c
        WHERE (c."id", c."workspace_id") IN (
            SELECT n."company_id", n."workspace_id"
            FROM "new_rows" n LEFT JOIN "old_rows" o ON o."id" = n."id"
            WHERE o."id" IS NULL OR o IS DISTINCT FROM n
            UNION ALL
            SELECT o."company_id", o."workspace_id"
            FROM "old_rows" o LEFT JOIN "new_rows" n ON n."id" = o."id"
            WHERE n."id" IS NULL OR o IS DISTINCT FROM n
        )
        $q$;
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION "lead_changes_track"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        EXECUTE $q$
        SELECT "record_lead_changes"(array_agg("workspace_id"), array_agg("id"), false) FROM "new_rows"
        $q$;
    ELSIF TG_OP = 'DELETE' THEN
        EXECUTE $q$
        SELECT "record_lead_changes"(array_agg("workspace_id"), array_agg("id"), true) FROM "old_rows"
        $q$;
    ELSE
        EXECUTE $q$
        SELECT "record_lead_changes"(array_agg(o."workspace_id"), array_agg(o."id"), true)
        FROM "old_rows" o
        WHERE NOT EXISTS (SELECT FROM "new_rows" n WHERE n."id" = o."id" AND n."workspace_id" = o."workspace_id")
        $q$;
        EXECUTE $q$
        SELECT "record_lead_changes"(array_agg(n."workspace_id"), array_agg(n."id"), false)
        FROM "new_rows" n
        LEFT JOIN "old_rows" o ON o."id" = n."id" AND o."workspace_id" = n."workspace_id"
        WHERE o."id" IS NULL OR o IS DISTINCT FROM n
        $q$;
    END IF;
    RETURN NULL;
END
$$;

-- The feed's page statement is planned on the change tables' statistics: without any (a fresh
-- backfill before autovacuum's first pass, or a server without autovacuum) the first page of a
-- large workspace was planned as a scan of its whole range and a sort (0.7-1.0 s instead of ~50 ms).
ANALYZE "company_changes", "lead_changes";

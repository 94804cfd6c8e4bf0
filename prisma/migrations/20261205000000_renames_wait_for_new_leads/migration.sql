-- A company's rename moves its leads (migration 20261124000000_change_feeds), including the leads
-- that transactions still open are adding to it.
--
-- The rename's query over "leads" does not see a lead that another transaction inserted, or moved
-- to the company, and has not committed. When that transaction commits before the rename does, a
-- reader can pass the lead's change while the rename is still open, read the lead with the old
-- name, and never see the lead again: the rename recorded its other leads only. The lead's
-- foreign-key check holds a KEY SHARE lock on the company until its transaction ends, and FOR
-- UPDATE conflicts with it: the rename now locks each renamed company so, waiting for such
-- transactions to end, and then reads the leads in a snapshot taken after them (each query of a
-- PL/pgSQL function takes its own under READ COMMITTED). A lead written after the lock waits,
-- at its foreign-key check, for the rename to end, and is read with the new name.
-- test/e2e/changes/changes.e2e-spec.ts reproduces the race.
--
-- Only a change of name takes the lock, and it is already the company's row lock the UPDATE holds
-- (FOR NO KEY UPDATE) made stronger: contacts and leads added to the renamed company wait for the
-- rename to commit. The function is replaced in place: no table is read or rewritten.
--
-- The same function as in 20261124100000_change_tracking_plans otherwise, query for query.

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
        -- The renamed companies, locked in key order (concurrent renames lock in one order).
        EXECUTE $q$
        SELECT FROM "companies" c
        WHERE (c."workspace_id", c."id") IN (
            SELECT n."workspace_id", n."id"
            FROM "new_rows" n
            JOIN "old_rows" o ON o."id" = n."id" AND o."workspace_id" = n."workspace_id"
            WHERE o."name" IS DISTINCT FROM n."name")
        ORDER BY c."workspace_id", c."id"
        FOR UPDATE OF c
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

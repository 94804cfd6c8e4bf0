-- The last time each company viewed each path: what `visitedPage` reads (filters.ts), where it
-- read every page view of the window. A page that 40 % of a million companies opened in 30 days
-- is a million or more page views, hashed by company and joined to the companies (a second); here
-- it is one row per company, in path order, so the exact total is one index range counted, and a
-- page of companies walks the companies' order index with a probe of this key per company.
--
-- The invariant: a row holds the latest viewed_at of the page views that exist for its workspace,
-- company and path, and there is a row exactly when one exists. The triggers below keep it,
-- whoever writes page views:
-- - an insert raises a row to its latest view (an upsert with greatest);
-- - a delete (the import replacing a visit, `admin delete --visits`, a company's deletion through
--   its visits) computes again, from the page views left, the rows whose latest view it deleted,
--   and removes those that have none left. It locks those rows first, then computes in a statement
--   of its own, which in READ COMMITTED sees every transaction that committed before the lock
--   was granted: a concurrent insert either committed its greatest before (and is seen) or
--   raises the row after. Computing without the lock first would miss a page view committed
--   between the computation and the write.
-- - `prune-visits`, which drops months whole (no trigger fires), computes again the rows whose
--   latest view may have been in a month it dropped, the same way (visit-pruning.service.ts).
-- A read through this table is exact for page views that count from at least 24 hours after the
-- retention's start: a page view's visit started at most 24 hours before it, so such a view's
-- visit is within the retention. visitedPage reads the page views themselves for the rest.
--
-- Keys start with workspace_id, the distribution column of a workspace-sharded cluster
-- (docs/scaling.md). No foreign key to companies: checked per row, it would cost the import a
-- lookup per company and path; a company's deletion deletes its visits, whose page views' delete
-- removes its rows here.
--
-- Filled from the page views there are, in this migration's transaction: creating the triggers
-- takes a SHARE ROW EXCLUSIVE lock on page_views, so writers of page views wait for the fill and
-- readers never do.

CREATE TABLE "visited_paths" (
    "workspace_id" TEXT NOT NULL,
    "company_id" TEXT NOT NULL,
    "path" TEXT COLLATE "C" NOT NULL,
    "last_viewed_at" TIMESTAMPTZ(3) NOT NULL,

    -- With the time, so that a company's probe (a page of companies walking their order index)
    -- reads this index alone, and the planner takes it over the path index below.
    CONSTRAINT "visited_paths_pkey" PRIMARY KEY ("workspace_id", "company_id", "path")
        INCLUDE ("last_viewed_at")
);

-- The companies that viewed a path (or a range of paths: a prefix) since a point in time, from
-- the index alone: visitedPage's total.
CREATE INDEX "visited_paths_path_idx" ON "visited_paths" ("workspace_id", "path", "last_viewed_at")
    INCLUDE ("company_id");

-- The rows of the given keys whose latest view may be gone, computed again from the page views
-- left: a key's row is locked first, in key order (concurrent writers lock in one order), then
-- computed by a statement of its own (see above). `latest` is each key's latest deleted view: a
-- row whose latest view is later lost none. Used by the trigger and by prune-visits.
CREATE FUNCTION "visited_paths_recompute"(workspace_ids TEXT[], company_ids TEXT[], paths TEXT[], latest TIMESTAMPTZ[])
    RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM FROM "visited_paths" seen
    WHERE (seen."workspace_id", seen."company_id", seen."path") IN (
        SELECT w, c, p FROM unnest(workspace_ids, company_ids, paths) AS k(w, c, p))
    ORDER BY seen."workspace_id", seen."company_id", seen."path"
    FOR UPDATE;

    WITH "lost" AS (
        SELECT w, c, p COLLATE "C" AS p, max(l) AS l
        FROM unnest(workspace_ids, company_ids, paths, latest) AS k(w, c, p, l) GROUP BY w, c, p
    ), "stale" AS (
        SELECT seen."workspace_id" AS w, seen."company_id" AS c, seen."path" AS p
        FROM "visited_paths" seen
        JOIN "lost" ON seen."workspace_id" = "lost".w AND seen."company_id" = "lost".c AND seen."path" = "lost".p
        WHERE "lost".l >= seen."last_viewed_at"
    ), "left_views" AS (
        -- Each company's page views read once, through its visits and their key: by path, the
        -- planner's estimates of a workspace being written lead it to the path index, and with
        -- it to every page view of the path (the deleted ones included).
        SELECT k.w, k.c, page."path" AS p, max(page."viewed_at") AS l
        FROM (SELECT DISTINCT w, c FROM "stale") k
        CROSS JOIN LATERAL (SELECT v."id", v."started_at" FROM "visits" v
            WHERE v."workspace_id" = k.w AND v."company_id" = k.c OFFSET 0) v
        CROSS JOIN LATERAL (SELECT p."path", p."viewed_at" FROM "page_views" p
            WHERE p."workspace_id" = k.w AND p."visit_id" = v."id"
                AND p."visit_started_at" = v."started_at" OFFSET 0) page
        GROUP BY k.w, k.c, page."path"
    ), "computed" AS (
        SELECT "stale".w, "stale".c, "stale".p, "left_views".l
        FROM "stale" LEFT JOIN "left_views"
            ON "left_views".w = "stale".w AND "left_views".c = "stale".c AND "left_views".p = "stale".p
    ), "emptied" AS (
        DELETE FROM "visited_paths" seen USING "computed"
        WHERE seen."workspace_id" = "computed".w AND seen."company_id" = "computed".c
            AND seen."path" = "computed".p AND "computed".l IS NULL
    )
    UPDATE "visited_paths" seen SET "last_viewed_at" = "computed".l
    FROM "computed"
    WHERE seen."workspace_id" = "computed".w AND seen."company_id" = "computed".c
        AND seen."path" = "computed".p
        AND "computed".l IS DISTINCT FROM seen."last_viewed_at" AND "computed".l IS NOT NULL;
END
$$;

-- Per statement, over its transition tables. An UPDATE is a delete of its old rows and an insert
-- of its new ones (the insert first: a row that keeps its latest view is then not computed).
CREATE FUNCTION "visited_paths_track"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO "visited_paths" ("workspace_id", "company_id", "path", "last_viewed_at")
        SELECT "workspace_id", "company_id", "path", max("viewed_at") FROM "new_rows"
        GROUP BY "workspace_id", "company_id", "path"
        ORDER BY "workspace_id", "company_id", "path"
        ON CONFLICT ("workspace_id", "company_id", "path") DO UPDATE
            SET "last_viewed_at" = excluded."last_viewed_at"
            WHERE "visited_paths"."last_viewed_at" < excluded."last_viewed_at";
    END IF;
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        PERFORM "visited_paths_recompute"(array_agg(w), array_agg(c), array_agg(p), array_agg(l))
        FROM (SELECT "workspace_id" AS w, "company_id" AS c, "path" AS p, max("viewed_at") AS l
            FROM "old_rows" GROUP BY 1, 2, 3) gone;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER "page_views_visited_paths_insert" AFTER INSERT ON "page_views"
    REFERENCING NEW TABLE AS "new_rows" FOR EACH STATEMENT EXECUTE FUNCTION "visited_paths_track"();
CREATE TRIGGER "page_views_visited_paths_update" AFTER UPDATE ON "page_views"
    REFERENCING OLD TABLE AS "old_rows" NEW TABLE AS "new_rows" FOR EACH STATEMENT EXECUTE FUNCTION "visited_paths_track"();
CREATE TRIGGER "page_views_visited_paths_delete" AFTER DELETE ON "page_views"
    REFERENCING OLD TABLE AS "old_rows" FOR EACH STATEMENT EXECUTE FUNCTION "visited_paths_track"();

-- Emptying page views (visits_truncate_pages) empties their paths.
CREATE FUNCTION "visited_paths_truncate"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    TRUNCATE "visited_paths";
    RETURN NULL;
END
$$;

CREATE TRIGGER "page_views_visited_paths_truncate" AFTER TRUNCATE ON "page_views"
    FOR EACH STATEMENT EXECUTE FUNCTION "visited_paths_truncate"();

INSERT INTO "visited_paths" ("workspace_id", "company_id", "path", "last_viewed_at")
SELECT "workspace_id", "company_id", "path", max("viewed_at") FROM "page_views"
GROUP BY "workspace_id", "company_id", "path";

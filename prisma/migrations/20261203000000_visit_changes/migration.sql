-- The visits' change feed (docs/changes.md): where each visit last changed, kept by triggers
-- whoever writes, as for companies and leads (migration 20261124000000_change_feeds, whose
-- reasons hold here: positions (txid, id), read below the oldest running transaction).
--
-- One row per visit, not per page view: a visit is written with its pages (the import replaces
-- a visit whole), and a change of a page view is a change of its visit. The row keeps the visit's
-- start: the feed leaves out a visit past the retention (a copy applies the same retention), and
-- `prune-visits` removes such rows when it drops their month. Not partitioned: a visit whose start
-- moves to another month keeps its one row.

CREATE TABLE "visit_changes" (
    "workspace_id" TEXT NOT NULL,
    "id" TEXT COLLATE "C" NOT NULL,
    "txid" xid8 NOT NULL,
    "changed_at" TIMESTAMPTZ(3) NOT NULL,
    "deleted" BOOLEAN NOT NULL,
    -- The visit's startedAt (its last one, for a deleted visit).
    "started_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "visit_changes_pkey" PRIMARY KEY ("workspace_id", "id")
);

-- The feed's order; a page is one range scan from the cursor's position.
CREATE INDEX "visit_changes_feed_idx" ON "visit_changes"("workspace_id", "txid", "id") INCLUDE ("deleted", "started_at");
-- prune-changes: the deletion records past the changes' retention.
CREATE INDEX "visit_changes_deleted_idx" ON "visit_changes"("changed_at") WHERE "deleted";
-- prune-visits: the rows of the months it drops.
CREATE INDEX "visit_changes_started_idx" ON "visit_changes"("started_at");

ALTER TABLE "change_horizons" DROP CONSTRAINT "change_horizons_feed_check";
ALTER TABLE "change_horizons" ADD CONSTRAINT "change_horizons_feed_check" CHECK ("feed" IN ('companies', 'leads', 'visits'));

-- Records visits as changed by this transaction, in (workspace_id, id) order so that concurrent
-- writers lock change rows in one order; a row already at this transaction and state is not
-- written again (a visit's pages are written in the same transaction as the visit).
CREATE FUNCTION "record_visit_changes"(workspace_ids TEXT[], ids TEXT[], started TIMESTAMPTZ[], is_deleted BOOLEAN)
    RETURNS void LANGUAGE sql AS $$
    INSERT INTO "visit_changes" ("workspace_id", "id", "txid", "changed_at", "deleted", "started_at")
    SELECT DISTINCT ON (w, i) w, i, pg_current_xact_id(), now(), is_deleted, s
    FROM unnest(workspace_ids, ids, started) AS item(w, i, s) ORDER BY w, i, s DESC
    ON CONFLICT ("workspace_id", "id") DO UPDATE
        SET "txid" = excluded."txid", "changed_at" = excluded."changed_at",
            "deleted" = excluded."deleted", "started_at" = excluded."started_at"
        WHERE ("visit_changes"."txid", "visit_changes"."deleted", "visit_changes"."started_at")
            IS DISTINCT FROM (excluded."txid", excluded."deleted", excluded."started_at");
$$;

-- As for companies: an UPDATE is compared row by row; every column of a visit is in its JSON
-- but workspace_id. A visit deleted and written again in one transaction (the import replacing
-- it) ends an upsert: its insert is recorded after its delete.
CREATE FUNCTION "visit_changes_track"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM "record_visit_changes"(array_agg("workspace_id"), array_agg("id"), array_agg("started_at"), false) FROM "new_rows";
    ELSIF TG_OP = 'DELETE' THEN
        PERFORM "record_visit_changes"(array_agg("workspace_id"), array_agg("id"), array_agg("started_at"), true) FROM "old_rows";
    ELSE
        PERFORM "record_visit_changes"(array_agg(o."workspace_id"), array_agg(o."id"), array_agg(o."started_at"), true)
        FROM "old_rows" o
        WHERE NOT EXISTS (SELECT FROM "new_rows" n WHERE n."id" = o."id" AND n."workspace_id" = o."workspace_id");
        PERFORM "record_visit_changes"(array_agg(n."workspace_id"), array_agg(n."id"), array_agg(n."started_at"), false)
        FROM "new_rows" n
        LEFT JOIN "old_rows" o ON o."id" = n."id" AND o."workspace_id" = n."workspace_id" AND o."started_at" = n."started_at"
        WHERE o."id" IS NULL OR o IS DISTINCT FROM n;
    END IF;
    RETURN NULL;
END
$$;

-- A page view is part of its visit's JSON: any change to one moves its visit, when the visit still
-- exists (a visit's deletion takes its pages, which must not turn it back into an upsert). The
-- import writes a visit and its pages in one transaction: the visit is already recorded, and
-- nothing is written again.
CREATE FUNCTION "page_view_changes_track"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM "record_visit_changes"(array_agg(v."workspace_id"), array_agg(v."id"), array_agg(v."started_at"), false)
        FROM "visits" v
        WHERE (v."workspace_id", v."id", v."started_at") IN (
            SELECT DISTINCT "workspace_id", "visit_id", "visit_started_at" FROM "new_rows");
    ELSE
        PERFORM "record_visit_changes"(array_agg(v."workspace_id"), array_agg(v."id"), array_agg(v."started_at"), false)
        FROM "visits" v
        WHERE (v."workspace_id", v."id", v."started_at") IN (
            SELECT DISTINCT "workspace_id", "visit_id", "visit_started_at" FROM "old_rows");
    END IF;
    RETURN NULL;
END
$$;

-- An UPDATE of page views fires the trigger twice: with its new rows and with its old ones.
CREATE FUNCTION "page_view_changes_track_update"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "record_visit_changes"(array_agg(v."workspace_id"), array_agg(v."id"), array_agg(v."started_at"), false)
    FROM "visits" v
    WHERE (v."workspace_id", v."id", v."started_at") IN (
        SELECT n."workspace_id", n."visit_id", n."visit_started_at"
        FROM "new_rows" n LEFT JOIN "old_rows" o
            ON o."workspace_id" = n."workspace_id" AND o."visit_id" = n."visit_id"
            AND o."visit_started_at" = n."visit_started_at" AND o."position" = n."position"
        WHERE o."position" IS NULL OR o IS DISTINCT FROM n
        UNION
        SELECT o."workspace_id", o."visit_id", o."visit_started_at"
        FROM "old_rows" o LEFT JOIN "new_rows" n
            ON o."workspace_id" = n."workspace_id" AND o."visit_id" = n."visit_id"
            AND o."visit_started_at" = n."visit_started_at" AND o."position" = n."position"
        WHERE n."position" IS NULL);
    RETURN NULL;
END
$$;

CREATE TRIGGER "visits_changes_insert" AFTER INSERT ON "visits"
    REFERENCING NEW TABLE AS "new_rows" FOR EACH STATEMENT EXECUTE FUNCTION "visit_changes_track"();
CREATE TRIGGER "visits_changes_update" AFTER UPDATE ON "visits"
    REFERENCING OLD TABLE AS "old_rows" NEW TABLE AS "new_rows" FOR EACH STATEMENT EXECUTE FUNCTION "visit_changes_track"();
CREATE TRIGGER "visits_changes_delete" AFTER DELETE ON "visits"
    REFERENCING OLD TABLE AS "old_rows" FOR EACH STATEMENT EXECUTE FUNCTION "visit_changes_track"();

CREATE TRIGGER "page_views_changes_insert" AFTER INSERT ON "page_views"
    REFERENCING NEW TABLE AS "new_rows" FOR EACH STATEMENT EXECUTE FUNCTION "page_view_changes_track"();
CREATE TRIGGER "page_views_changes_update" AFTER UPDATE ON "page_views"
    REFERENCING OLD TABLE AS "old_rows" NEW TABLE AS "new_rows" FOR EACH STATEMENT EXECUTE FUNCTION "page_view_changes_track_update"();
CREATE TRIGGER "page_views_changes_delete" AFTER DELETE ON "page_views"
    REFERENCING OLD TABLE AS "old_rows" FOR EACH STATEMENT EXECUTE FUNCTION "page_view_changes_track"();

-- TRUNCATE fires no row or transition trigger: every live visit of the emptied table is deleted.
-- (Truncating page_views alone is not tracked: it is only done with visits, by their trigger.)
CREATE FUNCTION "visit_changes_truncate"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE "visit_changes" SET "txid" = pg_current_xact_id(), "changed_at" = now(), "deleted" = true
    WHERE NOT "deleted";
    RETURN NULL;
END
$$;

CREATE TRIGGER "visits_changes_truncate" AFTER TRUNCATE ON "visits"
    FOR EACH STATEMENT EXECUTE FUNCTION "visit_changes_truncate"();

-- The visits already there: each as changed by this migration.
INSERT INTO "visit_changes" ("workspace_id", "id", "txid", "changed_at", "deleted", "started_at")
SELECT "workspace_id", "id", pg_current_xact_id(), now(), false, "started_at" FROM "visits";

-- Webhooks of visits (docs/webhooks.md): `visit.upserted` and `visit.deleted`, made from the
-- visits' change feed (migration 20261203000000_visit_changes) by the same dispatcher as the
-- others, and an endpoint's page patterns (`webhook create --pages`).
--
-- Nothing here rewrites or scans a large table: each ALTER TABLE adds a column without a default
-- or with a constant one (a change of the catalog alone), and the functions are replaced in
-- place. The ACCESS EXCLUSIVE locks they take last as long as this transaction, which reads no
-- table but webhook_endpoints (its constraint's check: one row per receiver).

-- An endpoint's position in the visits' feed. An endpoint made before this migration takes none
-- of the visit events (they are never in an endpoint's default set), and the dispatcher does not
-- read a feed an endpoint takes no event of: its position stays unused. A new endpoint starts at
-- the feeds' safe bound (webhooks/sql/endpoints.sql.ts).
ALTER TABLE "webhook_endpoints" ADD COLUMN "visit_txid" xid8 NOT NULL DEFAULT '0';
ALTER TABLE "webhook_endpoints" ALTER COLUMN "visit_txid" DROP DEFAULT;
ALTER TABLE "webhook_endpoints" ADD COLUMN "visit_id" TEXT COLLATE "C" NOT NULL DEFAULT '';
-- The page patterns (items/page-patterns.ts) of an endpoint that receives only the visit events
-- of visits with a matching page view; null: every visit event it subscribed to.
ALTER TABLE "webhook_endpoints" ADD COLUMN "pages" TEXT[] COLLATE "C";
ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "webhook_endpoints_pages_check" CHECK (
    cardinality("pages") BETWEEN 1 AND 10);

ALTER TABLE "webhook_endpoints" DROP CONSTRAINT "webhook_endpoints_event_types_check";
ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "webhook_endpoints_event_types_check" CHECK (
    cardinality("event_types") > 0 AND "event_types" <@
    ARRAY['company.upserted', 'company.deleted', 'lead.upserted', 'lead.deleted',
          'visit.upserted', 'visit.deleted']::TEXT[]);

-- A deleted visit's paths (distinct, in byte order), recorded as it is deleted: its page views
-- go with it, and a page-filtered endpoint is sent the deletion of a visit that had a matching
-- page view. Null for a live visit, and for a deletion whose paths are unknown (a TRUNCATE,
-- or one recorded before this migration): such a deletion goes to every page-filtered endpoint.
ALTER TABLE "visit_changes" ADD COLUMN "deleted_paths" TEXT[] COLLATE "C";

-- As before, and a visit recorded live forgets the paths of a deletion earlier in the row.
CREATE OR REPLACE FUNCTION "record_visit_changes"(workspace_ids TEXT[], ids TEXT[], started TIMESTAMPTZ[], is_deleted BOOLEAN)
    RETURNS void LANGUAGE sql AS $$
    INSERT INTO "visit_changes" ("workspace_id", "id", "txid", "changed_at", "deleted", "started_at")
    SELECT DISTINCT ON (w, i) w, i, pg_current_xact_id(), now(), is_deleted, s
    FROM unnest(workspace_ids, ids, started) AS item(w, i, s) ORDER BY w, i, s DESC
    ON CONFLICT ("workspace_id", "id") DO UPDATE
        SET "txid" = excluded."txid", "changed_at" = excluded."changed_at",
            "deleted" = excluded."deleted", "started_at" = excluded."started_at",
            "deleted_paths" = NULL
        WHERE ("visit_changes"."txid", "visit_changes"."deleted", "visit_changes"."started_at")
            IS DISTINCT FROM (excluded."txid", excluded."deleted", excluded."started_at");
$$;

-- Records visits as deleted by this transaction, each with its page views' paths. Called by the
-- visits' statement trigger, which fires before visits_delete_pages (PostgreSQL fires the
-- triggers of one event in the order of their names): the page views are still there.
CREATE FUNCTION "record_visit_deletions"(workspace_ids TEXT[], ids TEXT[], started TIMESTAMPTZ[])
    RETURNS void LANGUAGE sql AS $$
    INSERT INTO "visit_changes" ("workspace_id", "id", "txid", "changed_at", "deleted", "started_at", "deleted_paths")
    SELECT DISTINCT ON (w, i) w, i, pg_current_xact_id(), now(), true, s,
        ARRAY(SELECT DISTINCT p."path" FROM "page_views" p
            WHERE p."workspace_id" = w AND p."visit_id" = i AND p."visit_started_at" = s
            ORDER BY p."path")
    FROM unnest(workspace_ids, ids, started) AS item(w, i, s) ORDER BY w, i, s DESC
    ON CONFLICT ("workspace_id", "id") DO UPDATE
        SET "txid" = excluded."txid", "changed_at" = excluded."changed_at",
            "deleted" = excluded."deleted", "started_at" = excluded."started_at",
            "deleted_paths" = excluded."deleted_paths"
        WHERE ("visit_changes"."txid", "visit_changes"."deleted", "visit_changes"."started_at")
            IS DISTINCT FROM (excluded."txid", excluded."deleted", excluded."started_at");
$$;

-- As in migration 20261203000000_visit_changes, a deletion now recorded with its paths.
CREATE OR REPLACE FUNCTION "visit_changes_track"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM "record_visit_changes"(array_agg("workspace_id"), array_agg("id"), array_agg("started_at"), false) FROM "new_rows";
    ELSIF TG_OP = 'DELETE' THEN
        PERFORM "record_visit_deletions"(array_agg("workspace_id"), array_agg("id"), array_agg("started_at")) FROM "old_rows";
    ELSE
        PERFORM "record_visit_deletions"(array_agg(o."workspace_id"), array_agg(o."id"), array_agg(o."started_at"))
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

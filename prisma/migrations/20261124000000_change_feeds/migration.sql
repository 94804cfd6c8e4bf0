-- Change feeds: where each company and lead last changed, kept by triggers whoever writes.
--
-- One row per item and feed, rewritten in place at every change of the item's JSON: an item
-- changed many times appears once, at its latest change, and a deleted item keeps a row
-- (`deleted`) until `prune-changes` removes it after the retention.
--
-- A change's position is (txid, id): the 64-bit id of the writing transaction, then the item id.
-- Transactions commit in any order, so a plain sequence drawn at write time is not a position a
-- reader can trust: a transaction that drew 10 may commit after a reader saw 11 and moved past 10.
-- The feed instead returns only the changes whose txid is below its snapshot's xmin (every
-- transaction below xmin has ended), and every transaction that writes later has a txid at or
-- above that xmin: a position the feed has returned is never written to again below it. The cost
-- is latency: a transaction that runs long holds back the changes of every transaction that
-- started after it, until it ends (docs/changes.md).
--
-- What moves an item: an insert, a delete, an update that changes one of its columns (an update
-- that rewrites the same values moves nothing), a change to one of a company's contacts (its
-- company, both companies when a contact moves), and a change to a company's name (its leads,
-- which embed it). Triggers are per statement, over transition tables, like the day counts: a
-- 10,000-row import runs each once per statement, not once per row.

CREATE TABLE "company_changes" (
    "workspace_id" TEXT NOT NULL,
    "id" TEXT COLLATE "C" NOT NULL,
    "txid" xid8 NOT NULL,
    "changed_at" TIMESTAMPTZ(3) NOT NULL,
    "deleted" BOOLEAN NOT NULL,

    CONSTRAINT "company_changes_pkey" PRIMARY KEY ("workspace_id", "id")
);

CREATE TABLE "lead_changes" (
    "workspace_id" TEXT NOT NULL,
    "id" TEXT COLLATE "C" NOT NULL,
    "txid" xid8 NOT NULL,
    "changed_at" TIMESTAMPTZ(3) NOT NULL,
    "deleted" BOOLEAN NOT NULL,

    CONSTRAINT "lead_changes_pkey" PRIMARY KEY ("workspace_id", "id")
);

-- The feeds' order. A page is one range scan from the cursor's position.
CREATE INDEX "company_changes_feed_idx" ON "company_changes"("workspace_id", "txid", "id") INCLUDE ("deleted");
CREATE INDEX "lead_changes_feed_idx" ON "lead_changes"("workspace_id", "txid", "id") INCLUDE ("deleted");
-- prune-changes: the deletion records past the retention.
CREATE INDEX "company_changes_deleted_idx" ON "company_changes"("changed_at") WHERE "deleted";
CREATE INDEX "lead_changes_deleted_idx" ON "lead_changes"("changed_at") WHERE "deleted";

-- Per workspace and feed, the last position whose deletion records prune-changes removed: a cursor
-- before it may have missed a deletion, and is answered 410.
CREATE TABLE "change_horizons" (
    "workspace_id" TEXT NOT NULL,
    "feed" TEXT NOT NULL,
    "pruned_txid" xid8 NOT NULL,
    "pruned_id" TEXT COLLATE "C" NOT NULL,

    CONSTRAINT "change_horizons_pkey" PRIMARY KEY ("workspace_id", "feed"),
    CONSTRAINT "change_horizons_feed_check" CHECK ("feed" IN ('companies', 'leads'))
);

-- Records items as changed by this transaction, in (workspace_id, id) order so that concurrent
-- writers lock change rows in one order. A row already at this transaction and state is not
-- written again (an import touches a company for itself and again for its contacts).
CREATE FUNCTION "record_company_changes"(workspace_ids TEXT[], ids TEXT[], is_deleted BOOLEAN)
    RETURNS void LANGUAGE sql AS $$
    INSERT INTO "company_changes" ("workspace_id", "id", "txid", "changed_at", "deleted")
    SELECT DISTINCT w, i, pg_current_xact_id(), now(), is_deleted
    FROM unnest(workspace_ids, ids) AS item(w, i) ORDER BY 1, 2
    ON CONFLICT ("workspace_id", "id") DO UPDATE
        SET "txid" = excluded."txid", "changed_at" = excluded."changed_at", "deleted" = excluded."deleted"
        WHERE ("company_changes"."txid", "company_changes"."deleted")
            IS DISTINCT FROM (excluded."txid", excluded."deleted");
$$;

CREATE FUNCTION "record_lead_changes"(workspace_ids TEXT[], ids TEXT[], is_deleted BOOLEAN)
    RETURNS void LANGUAGE sql AS $$
    INSERT INTO "lead_changes" ("workspace_id", "id", "txid", "changed_at", "deleted")
    SELECT DISTINCT w, i, pg_current_xact_id(), now(), is_deleted
    FROM unnest(workspace_ids, ids) AS item(w, i) ORDER BY 1, 2
    ON CONFLICT ("workspace_id", "id") DO UPDATE
        SET "txid" = excluded."txid", "changed_at" = excluded."changed_at", "deleted" = excluded."deleted"
        WHERE ("lead_changes"."txid", "lead_changes"."deleted")
            IS DISTINCT FROM (excluded."txid", excluded."deleted");
$$;

-- An UPDATE is compared row by row (whole rows, `IS DISTINCT FROM`, nulls equal): a row whose key
-- (workspace_id, id) left the statement's new rows was deleted from that workspace, a new or
-- different row is an upsert. Every column of a company, contact or lead is in the API's JSON but
-- workspace_id, which is part of the key. Transition tables exist only for the events that have
-- them, hence one branch per event (a query naming an absent one does not compile).
CREATE FUNCTION "company_changes_track"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM "record_company_changes"(array_agg("workspace_id"), array_agg("id"), false) FROM "new_rows";
    ELSIF TG_OP = 'DELETE' THEN
        -- Contacts and leads go with the company, by the foreign keys' cascade; the leads' own
        -- trigger records their deletions.
        PERFORM "record_company_changes"(array_agg("workspace_id"), array_agg("id"), true) FROM "old_rows";
    ELSE
        PERFORM "record_company_changes"(array_agg(o."workspace_id"), array_agg(o."id"), true)
        FROM "old_rows" o
        WHERE NOT EXISTS (SELECT FROM "new_rows" n WHERE n."id" = o."id" AND n."workspace_id" = o."workspace_id");
        PERFORM "record_company_changes"(array_agg(n."workspace_id"), array_agg(n."id"), false)
        FROM "new_rows" n
        LEFT JOIN "old_rows" o ON o."id" = n."id" AND o."workspace_id" = n."workspace_id"
        WHERE o."id" IS NULL OR o IS DISTINCT FROM n;
        -- A lead embeds its company's name.
        PERFORM "record_lead_changes"(array_agg(l."workspace_id"), array_agg(l."id"), false)
        FROM "new_rows" n
        JOIN "old_rows" o ON o."id" = n."id" AND o."workspace_id" = n."workspace_id"
        JOIN "leads" l ON l."company_id" = n."id" AND l."workspace_id" = n."workspace_id"
        WHERE o."name" IS DISTINCT FROM n."name";
    END IF;
    RETURN NULL;
END
$$;

-- A contact is part of its company's JSON: any change to one moves its company, both companies
-- when it moves from one to another. Only companies that still exist: when a company is deleted,
-- its contacts' cascade must not turn its deletion back into an upsert.
CREATE FUNCTION "contact_changes_track"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM "record_company_changes"(array_agg(c."workspace_id"), array_agg(c."id"), false)
        FROM "companies" c
        WHERE (c."id", c."workspace_id") IN (SELECT "company_id", "workspace_id" FROM "new_rows");
    ELSIF TG_OP = 'DELETE' THEN
        PERFORM "record_company_changes"(array_agg(c."workspace_id"), array_agg(c."id"), false)
        FROM "companies" c
        WHERE (c."id", c."workspace_id") IN (SELECT "company_id", "workspace_id" FROM "old_rows");
    ELSE
        PERFORM "record_company_changes"(array_agg(c."workspace_id"), array_agg(c."id"), false)
        FROM "companies" c
        WHERE (c."id", c."workspace_id") IN (
            SELECT n."company_id", n."workspace_id"
            FROM "new_rows" n LEFT JOIN "old_rows" o ON o."id" = n."id"
            WHERE o."id" IS NULL OR o IS DISTINCT FROM n
            UNION ALL
            SELECT o."company_id", o."workspace_id"
            FROM "old_rows" o LEFT JOIN "new_rows" n ON n."id" = o."id"
            WHERE n."id" IS NULL OR o IS DISTINCT FROM n
        );
    END IF;
    RETURN NULL;
END
$$;

CREATE FUNCTION "lead_changes_track"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM "record_lead_changes"(array_agg("workspace_id"), array_agg("id"), false) FROM "new_rows";
    ELSIF TG_OP = 'DELETE' THEN
        PERFORM "record_lead_changes"(array_agg("workspace_id"), array_agg("id"), true) FROM "old_rows";
    ELSE
        PERFORM "record_lead_changes"(array_agg(o."workspace_id"), array_agg(o."id"), true)
        FROM "old_rows" o
        WHERE NOT EXISTS (SELECT FROM "new_rows" n WHERE n."id" = o."id" AND n."workspace_id" = o."workspace_id");
        PERFORM "record_lead_changes"(array_agg(n."workspace_id"), array_agg(n."id"), false)
        FROM "new_rows" n
        LEFT JOIN "old_rows" o ON o."id" = n."id" AND o."workspace_id" = n."workspace_id"
        WHERE o."id" IS NULL OR o IS DISTINCT FROM n;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER "companies_changes_insert" AFTER INSERT ON "companies"
    REFERENCING NEW TABLE AS "new_rows" FOR EACH STATEMENT EXECUTE FUNCTION "company_changes_track"();
CREATE TRIGGER "companies_changes_update" AFTER UPDATE ON "companies"
    REFERENCING OLD TABLE AS "old_rows" NEW TABLE AS "new_rows" FOR EACH STATEMENT EXECUTE FUNCTION "company_changes_track"();
CREATE TRIGGER "companies_changes_delete" AFTER DELETE ON "companies"
    REFERENCING OLD TABLE AS "old_rows" FOR EACH STATEMENT EXECUTE FUNCTION "company_changes_track"();

CREATE TRIGGER "contacts_changes_insert" AFTER INSERT ON "contacts"
    REFERENCING NEW TABLE AS "new_rows" FOR EACH STATEMENT EXECUTE FUNCTION "contact_changes_track"();
CREATE TRIGGER "contacts_changes_update" AFTER UPDATE ON "contacts"
    REFERENCING OLD TABLE AS "old_rows" NEW TABLE AS "new_rows" FOR EACH STATEMENT EXECUTE FUNCTION "contact_changes_track"();
CREATE TRIGGER "contacts_changes_delete" AFTER DELETE ON "contacts"
    REFERENCING OLD TABLE AS "old_rows" FOR EACH STATEMENT EXECUTE FUNCTION "contact_changes_track"();

CREATE TRIGGER "leads_changes_insert" AFTER INSERT ON "leads"
    REFERENCING NEW TABLE AS "new_rows" FOR EACH STATEMENT EXECUTE FUNCTION "lead_changes_track"();
CREATE TRIGGER "leads_changes_update" AFTER UPDATE ON "leads"
    REFERENCING OLD TABLE AS "old_rows" NEW TABLE AS "new_rows" FOR EACH STATEMENT EXECUTE FUNCTION "lead_changes_track"();
CREATE TRIGGER "leads_changes_delete" AFTER DELETE ON "leads"
    REFERENCING OLD TABLE AS "old_rows" FOR EACH STATEMENT EXECUTE FUNCTION "lead_changes_track"();

-- TRUNCATE fires no row or transition trigger: every live item of the emptied table is deleted,
-- and emptying contacts changes every company that had some.
CREATE FUNCTION "changes_truncate"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_TABLE_NAME = 'companies' THEN
        UPDATE "company_changes" SET "txid" = pg_current_xact_id(), "changed_at" = now(), "deleted" = true
        WHERE NOT "deleted";
    ELSIF TG_TABLE_NAME = 'leads' THEN
        UPDATE "lead_changes" SET "txid" = pg_current_xact_id(), "changed_at" = now(), "deleted" = true
        WHERE NOT "deleted";
    ELSE
        PERFORM "record_company_changes"(array_agg("workspace_id"), array_agg("id"), false) FROM "companies";
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER "companies_changes_truncate" AFTER TRUNCATE ON "companies"
    FOR EACH STATEMENT EXECUTE FUNCTION "changes_truncate"();
CREATE TRIGGER "contacts_changes_truncate" AFTER TRUNCATE ON "contacts"
    FOR EACH STATEMENT EXECUTE FUNCTION "changes_truncate"();
CREATE TRIGGER "leads_changes_truncate" AFTER TRUNCATE ON "leads"
    FOR EACH STATEMENT EXECUTE FUNCTION "changes_truncate"();

-- The rows already there: every live item, as changed by this migration.
INSERT INTO "company_changes" ("workspace_id", "id", "txid", "changed_at", "deleted")
SELECT "workspace_id", "id", pg_current_xact_id(), now(), false FROM "companies";
INSERT INTO "lead_changes" ("workspace_id", "id", "txid", "changed_at", "deleted")
SELECT "workspace_id", "id", pg_current_xact_id(), now(), false FROM "leads";

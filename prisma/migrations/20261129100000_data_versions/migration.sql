-- The version of a workspace's data, for the ETags of the lists and single reads (docs/api.md,
-- "Conditional requests"): the number of transactions that wrote its companies, contacts or
-- leads and committed, as a snapshot sees it.
--
-- Every writing transaction adds one row (workspace, its transaction id) in its own transaction,
-- so a reader sees the row exactly when it sees the writes: the count moves with every commit,
-- whatever the order in which writers commit (a version made from the change positions would
-- miss a transaction that commits after a later one: its id is lower). And no writer waits on
-- another: each inserts its own key, where one counter row would queue every writer of a
-- workspace until its commit (measured: the change-feed property test hung on it).
--
-- So that the count stays small, a writer now and then (one transaction in 64) folds the rows of
-- transactions that have ended into the workspace's base count, in one statement, under a
-- transaction-scoped advisory lock taken without waiting (a writer that does not get it skips
-- the fold). Every snapshot sees the fold whole or not at all: the total does not move.
CREATE TABLE "workspace_writes" (
    "workspace_id" TEXT NOT NULL,
    "txid" xid8 NOT NULL,

    CONSTRAINT "workspace_writes_pkey" PRIMARY KEY ("workspace_id", "txid")
);

CREATE TABLE "workspace_write_counts" (
    "workspace_id" TEXT NOT NULL,
    "writes" BIGINT NOT NULL,

    CONSTRAINT "workspace_write_counts_pkey" PRIMARY KEY ("workspace_id")
);

CREATE FUNCTION "workspace_writes_fold"(workspace TEXT) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    -- 0x5753 ('WS'): the advisory key space of this fold, one key per workspace.
    IF NOT pg_try_advisory_xact_lock(22355, hashtext(workspace)) THEN
        RETURN;
    END IF;
    WITH folded AS (
        DELETE FROM "workspace_writes"
        WHERE "workspace_id" = workspace AND "txid" < pg_snapshot_xmin(pg_current_snapshot())
        RETURNING 1
    )
    INSERT INTO "workspace_write_counts" ("workspace_id", "writes")
    SELECT workspace, count(*) FROM folded HAVING count(*) > 0
    ON CONFLICT ("workspace_id") DO UPDATE
        SET "writes" = "workspace_write_counts"."writes" + excluded."writes";
END
$$;

CREATE FUNCTION "workspace_writes_record"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    workspace TEXT;
BEGIN
    -- One transition table per trigger: an UPDATE that moves rows to another workspace fires the
    -- trigger twice, once with the new rows and once with the old ones.
    FOR workspace IN
        SELECT DISTINCT "workspace_id" FROM "changed_rows" ORDER BY 1
    LOOP
        INSERT INTO "workspace_writes" ("workspace_id", "txid")
        VALUES (workspace, pg_current_xact_id())
        ON CONFLICT DO NOTHING;
        IF pg_current_xact_id()::text::bigint % 64 = 0 THEN
            PERFORM "workspace_writes_fold"(workspace);
        END IF;
    END LOOP;
    RETURN NULL;
END
$$;

-- TRUNCATE fires no transition trigger: every workspace's version moves.
CREATE FUNCTION "workspace_writes_record_all"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO "workspace_writes" ("workspace_id", "txid")
    SELECT "id", pg_current_xact_id() FROM "workspaces"
    ON CONFLICT DO NOTHING;
    RETURN NULL;
END
$$;

CREATE TRIGGER "companies_data_version_insert" AFTER INSERT ON "companies"
    REFERENCING NEW TABLE AS "changed_rows" FOR EACH STATEMENT EXECUTE FUNCTION "workspace_writes_record"();
CREATE TRIGGER "companies_data_version_update" AFTER UPDATE ON "companies"
    REFERENCING NEW TABLE AS "changed_rows" FOR EACH STATEMENT EXECUTE FUNCTION "workspace_writes_record"();
CREATE TRIGGER "companies_data_version_update_from" AFTER UPDATE ON "companies"
    REFERENCING OLD TABLE AS "changed_rows" FOR EACH STATEMENT EXECUTE FUNCTION "workspace_writes_record"();
CREATE TRIGGER "companies_data_version_delete" AFTER DELETE ON "companies"
    REFERENCING OLD TABLE AS "changed_rows" FOR EACH STATEMENT EXECUTE FUNCTION "workspace_writes_record"();
CREATE TRIGGER "companies_data_version_truncate" AFTER TRUNCATE ON "companies"
    FOR EACH STATEMENT EXECUTE FUNCTION "workspace_writes_record_all"();

CREATE TRIGGER "contacts_data_version_insert" AFTER INSERT ON "contacts"
    REFERENCING NEW TABLE AS "changed_rows" FOR EACH STATEMENT EXECUTE FUNCTION "workspace_writes_record"();
CREATE TRIGGER "contacts_data_version_update" AFTER UPDATE ON "contacts"
    REFERENCING NEW TABLE AS "changed_rows" FOR EACH STATEMENT EXECUTE FUNCTION "workspace_writes_record"();
CREATE TRIGGER "contacts_data_version_update_from" AFTER UPDATE ON "contacts"
    REFERENCING OLD TABLE AS "changed_rows" FOR EACH STATEMENT EXECUTE FUNCTION "workspace_writes_record"();
CREATE TRIGGER "contacts_data_version_delete" AFTER DELETE ON "contacts"
    REFERENCING OLD TABLE AS "changed_rows" FOR EACH STATEMENT EXECUTE FUNCTION "workspace_writes_record"();
CREATE TRIGGER "contacts_data_version_truncate" AFTER TRUNCATE ON "contacts"
    FOR EACH STATEMENT EXECUTE FUNCTION "workspace_writes_record_all"();

CREATE TRIGGER "leads_data_version_insert" AFTER INSERT ON "leads"
    REFERENCING NEW TABLE AS "changed_rows" FOR EACH STATEMENT EXECUTE FUNCTION "workspace_writes_record"();
CREATE TRIGGER "leads_data_version_update" AFTER UPDATE ON "leads"
    REFERENCING NEW TABLE AS "changed_rows" FOR EACH STATEMENT EXECUTE FUNCTION "workspace_writes_record"();
CREATE TRIGGER "leads_data_version_update_from" AFTER UPDATE ON "leads"
    REFERENCING OLD TABLE AS "changed_rows" FOR EACH STATEMENT EXECUTE FUNCTION "workspace_writes_record"();
CREATE TRIGGER "leads_data_version_delete" AFTER DELETE ON "leads"
    REFERENCING OLD TABLE AS "changed_rows" FOR EACH STATEMENT EXECUTE FUNCTION "workspace_writes_record"();
CREATE TRIGGER "leads_data_version_truncate" AFTER TRUNCATE ON "leads"
    FOR EACH STATEMENT EXECUTE FUNCTION "workspace_writes_record_all"();


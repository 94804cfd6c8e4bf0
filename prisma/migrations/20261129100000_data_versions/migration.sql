-- The version of a workspace's data, for the ETags of the lists and single reads (docs/api.md,
-- "Conditional requests"): a counter per workspace that every statement writing its companies,
-- contacts or leads increments, in the writing transaction.
--
-- Why a counter and not the change feeds' positions: a reader sees the counter and the rows in
-- one snapshot (the list and item statements read both), and the counter's row lock orders the
-- writers of a workspace by commit: a transaction that commits late still moves the version past
-- every value a reader could have seen before it committed. The change positions (transaction
-- ids) do not: a writer that started earlier commits later with a lower id.
--
-- The price: the writers of one workspace queue on its counter row from their first write to
-- their commit. The triggers are named to fire before the count triggers of the same statement,
-- so that every writer takes the counter first and locks are always taken in the same order.
CREATE TABLE "workspace_data_versions" (
    "workspace_id" TEXT NOT NULL,
    "version" BIGINT NOT NULL,

    CONSTRAINT "workspace_data_versions_pkey" PRIMARY KEY ("workspace_id")
);

CREATE FUNCTION "workspace_data_versions_bump"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- Transition tables exist only for the events that have them (see the day counts).
    IF TG_OP = 'INSERT' THEN
        INSERT INTO "workspace_data_versions" ("workspace_id", "version")
        SELECT DISTINCT "workspace_id", 1 FROM "new_rows" ORDER BY 1
        ON CONFLICT ("workspace_id") DO UPDATE SET "version" = "workspace_data_versions"."version" + 1;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO "workspace_data_versions" ("workspace_id", "version")
        SELECT DISTINCT "workspace_id", 1 FROM "old_rows" ORDER BY 1
        ON CONFLICT ("workspace_id") DO UPDATE SET "version" = "workspace_data_versions"."version" + 1;
    ELSE
        INSERT INTO "workspace_data_versions" ("workspace_id", "version")
        SELECT "workspace_id", 1 FROM (
            SELECT "workspace_id" FROM "new_rows" UNION SELECT "workspace_id" FROM "old_rows"
        ) touched ORDER BY 1
        ON CONFLICT ("workspace_id") DO UPDATE SET "version" = "workspace_data_versions"."version" + 1;
    END IF;
    RETURN NULL;
END
$$;

-- TRUNCATE fires no transition trigger: every workspace's version moves.
CREATE FUNCTION "workspace_data_versions_bump_all"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE "workspace_data_versions" SET "version" = "version" + 1;
    RETURN NULL;
END
$$;

CREATE TRIGGER "companies_0_data_version_insert" AFTER INSERT ON "companies"
    REFERENCING NEW TABLE AS "new_rows" FOR EACH STATEMENT EXECUTE FUNCTION "workspace_data_versions_bump"();
CREATE TRIGGER "companies_0_data_version_update" AFTER UPDATE ON "companies"
    REFERENCING OLD TABLE AS "old_rows" NEW TABLE AS "new_rows" FOR EACH STATEMENT EXECUTE FUNCTION "workspace_data_versions_bump"();
CREATE TRIGGER "companies_0_data_version_delete" AFTER DELETE ON "companies"
    REFERENCING OLD TABLE AS "old_rows" FOR EACH STATEMENT EXECUTE FUNCTION "workspace_data_versions_bump"();
CREATE TRIGGER "companies_0_data_version_truncate" AFTER TRUNCATE ON "companies"
    FOR EACH STATEMENT EXECUTE FUNCTION "workspace_data_versions_bump_all"();

CREATE TRIGGER "contacts_0_data_version_insert" AFTER INSERT ON "contacts"
    REFERENCING NEW TABLE AS "new_rows" FOR EACH STATEMENT EXECUTE FUNCTION "workspace_data_versions_bump"();
CREATE TRIGGER "contacts_0_data_version_update" AFTER UPDATE ON "contacts"
    REFERENCING OLD TABLE AS "old_rows" NEW TABLE AS "new_rows" FOR EACH STATEMENT EXECUTE FUNCTION "workspace_data_versions_bump"();
CREATE TRIGGER "contacts_0_data_version_delete" AFTER DELETE ON "contacts"
    REFERENCING OLD TABLE AS "old_rows" FOR EACH STATEMENT EXECUTE FUNCTION "workspace_data_versions_bump"();
CREATE TRIGGER "contacts_0_data_version_truncate" AFTER TRUNCATE ON "contacts"
    FOR EACH STATEMENT EXECUTE FUNCTION "workspace_data_versions_bump_all"();

CREATE TRIGGER "leads_0_data_version_insert" AFTER INSERT ON "leads"
    REFERENCING NEW TABLE AS "new_rows" FOR EACH STATEMENT EXECUTE FUNCTION "workspace_data_versions_bump"();
CREATE TRIGGER "leads_0_data_version_update" AFTER UPDATE ON "leads"
    REFERENCING OLD TABLE AS "old_rows" NEW TABLE AS "new_rows" FOR EACH STATEMENT EXECUTE FUNCTION "workspace_data_versions_bump"();
CREATE TRIGGER "leads_0_data_version_delete" AFTER DELETE ON "leads"
    REFERENCING OLD TABLE AS "old_rows" FOR EACH STATEMENT EXECUTE FUNCTION "workspace_data_versions_bump"();
CREATE TRIGGER "leads_0_data_version_truncate" AFTER TRUNCATE ON "leads"
    FOR EACH STATEMENT EXECUTE FUNCTION "workspace_data_versions_bump_all"();


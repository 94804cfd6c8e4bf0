-- The lists' filters (docs/api.md, "Filters").
--
-- 1. An order index that also holds every filtered column, so that a filtered page's ids come from
--    the index alone, never from table rows. A second index rather than wider columns in the
--    first: the unfiltered lists keep reading the narrower one (the planner takes the smaller of
--    two indexes of the same order), so their deep pages cost what they did; the price is one
--    more index to write on import.
CREATE INDEX "companies_workspace_filters_idx" ON "companies"("workspace_id", "intent_score" DESC, "id")
  INCLUDE ("last_seen", "intent_level", "crm_status", "country");
CREATE INDEX "leads_workspace_filters_idx" ON "leads"("workspace_id", "intent_score" DESC, "id")
  INCLUDE ("created_at", "intent_level", "status", "assigned_to_id");

-- 2. A filtered `total` without counting the rows: the rows' number per workspace and combination
--    of the filtered values, the score by whole points (0 to 100). Counting the matching rows of a
--    million-company workspace took 200 ms (a parallel scan); summing these is a few thousand rows
--    at most. A `minIntentScore` with a fraction also counts, from the filter index, the rows of
--    its own whole point below it (list-page-sql.ts). A lead's missing assignee is counted under ''.
--
--    Kept so that no writer ever waits on another (the change feeds' tests schedule concurrent
--    writers of one workspace, and the per-day counts were designed for it: writers of different
--    days never share a row). An upserted count per combination would make every writer of a
--    workspace wait on the writers of the same combination until they commit. Instead each
--    writing transaction adds its deltas under its own transaction id (`*_filter_count_deltas`),
--    and a writer now and then (one transaction in 64) folds the deltas of ended transactions
--    into the base counts (`*_filter_counts`), under a transaction-scoped advisory lock taken
--    without waiting, in one statement that every snapshot sees whole or not at all. A total is
--    the sum of both tables' matching rows.
CREATE TABLE "company_filter_counts" (
    "workspace_id" TEXT NOT NULL,
    "intent_level" "IntentLevel" NOT NULL,
    "crm_status" "CrmStatus" NOT NULL,
    "country" TEXT NOT NULL,
    "intent_score_floor" SMALLINT NOT NULL,
    "companies" BIGINT NOT NULL,

    CONSTRAINT "company_filter_counts_pkey" PRIMARY KEY ("workspace_id", "intent_level", "crm_status", "country", "intent_score_floor")
);

CREATE TABLE "company_filter_count_deltas" (
    "workspace_id" TEXT NOT NULL,
    "txid" xid8 NOT NULL,
    "intent_level" "IntentLevel" NOT NULL,
    "crm_status" "CrmStatus" NOT NULL,
    "country" TEXT NOT NULL,
    "intent_score_floor" SMALLINT NOT NULL,
    "companies" BIGINT NOT NULL,

    CONSTRAINT "company_filter_count_deltas_pkey" PRIMARY KEY ("workspace_id", "txid", "intent_level", "crm_status", "country", "intent_score_floor")
);

CREATE TABLE "lead_filter_counts" (
    "workspace_id" TEXT NOT NULL,
    "intent_level" "IntentLevel" NOT NULL,
    "status" "LeadStatus" NOT NULL,
    "assigned_to_id" TEXT NOT NULL,
    "intent_score_floor" SMALLINT NOT NULL,
    "leads" BIGINT NOT NULL,

    CONSTRAINT "lead_filter_counts_pkey" PRIMARY KEY ("workspace_id", "intent_level", "status", "assigned_to_id", "intent_score_floor")
);

CREATE TABLE "lead_filter_count_deltas" (
    "workspace_id" TEXT NOT NULL,
    "txid" xid8 NOT NULL,
    "intent_level" "IntentLevel" NOT NULL,
    "status" "LeadStatus" NOT NULL,
    "assigned_to_id" TEXT NOT NULL,
    "intent_score_floor" SMALLINT NOT NULL,
    "leads" BIGINT NOT NULL,

    CONSTRAINT "lead_filter_count_deltas_pkey" PRIMARY KEY ("workspace_id", "txid", "intent_level", "status", "assigned_to_id", "intent_score_floor")
);

CREATE FUNCTION "company_filter_counts_fold"(workspace TEXT) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF NOT pg_try_advisory_xact_lock(22358, hashtext(workspace)) THEN
        RETURN;
    END IF;
    WITH folded AS (
        DELETE FROM "company_filter_count_deltas"
        WHERE "workspace_id" = workspace AND "txid" < pg_snapshot_xmin(pg_current_snapshot())
        RETURNING "intent_level", "crm_status", "country", "intent_score_floor", "companies"
    )
    INSERT INTO "company_filter_counts" ("workspace_id", "intent_level", "crm_status", "country", "intent_score_floor", "companies")
    SELECT workspace, "intent_level", "crm_status", "country", "intent_score_floor", sum("companies") FROM folded GROUP BY "intent_level", "crm_status", "country", "intent_score_floor" ORDER BY "intent_level", "crm_status", "country", "intent_score_floor"
    ON CONFLICT ("workspace_id", "intent_level", "crm_status", "country", "intent_score_floor")
        DO UPDATE SET "companies" = "company_filter_counts"."companies" + excluded."companies";
END
$$;

CREATE FUNCTION "company_filter_counts_apply"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    workspace TEXT;
BEGIN
    -- Transition tables exist only for the events that have them (see the day counts).
    IF TG_OP = 'INSERT' THEN
        INSERT INTO "company_filter_count_deltas" ("workspace_id", "txid", "intent_level", "crm_status", "country", "intent_score_floor", "companies")
        SELECT "workspace_id", pg_current_xact_id(), "intent_level", "crm_status", "country", "intent_score_floor", sum(n) FROM (SELECT "workspace_id", "intent_level", "crm_status", "country", floor("intent_score")::smallint AS "intent_score_floor", 1 AS n FROM "new_rows") moves
        GROUP BY "workspace_id", "intent_level", "crm_status", "country", "intent_score_floor" HAVING sum(n) <> 0
        ON CONFLICT ("workspace_id", "txid", "intent_level", "crm_status", "country", "intent_score_floor")
            DO UPDATE SET "companies" = "company_filter_count_deltas"."companies" + excluded."companies";
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO "company_filter_count_deltas" ("workspace_id", "txid", "intent_level", "crm_status", "country", "intent_score_floor", "companies")
        SELECT "workspace_id", pg_current_xact_id(), "intent_level", "crm_status", "country", "intent_score_floor", sum(n) FROM (SELECT "workspace_id", "intent_level", "crm_status", "country", floor("intent_score")::smallint AS "intent_score_floor", -1 AS n FROM "old_rows") moves
        GROUP BY "workspace_id", "intent_level", "crm_status", "country", "intent_score_floor" HAVING sum(n) <> 0
        ON CONFLICT ("workspace_id", "txid", "intent_level", "crm_status", "country", "intent_score_floor")
            DO UPDATE SET "companies" = "company_filter_count_deltas"."companies" + excluded."companies";
    ELSE
        INSERT INTO "company_filter_count_deltas" ("workspace_id", "txid", "intent_level", "crm_status", "country", "intent_score_floor", "companies")
        SELECT "workspace_id", pg_current_xact_id(), "intent_level", "crm_status", "country", "intent_score_floor", sum(n) FROM (
            SELECT "workspace_id", "intent_level", "crm_status", "country", floor("intent_score")::smallint AS "intent_score_floor", 1 AS n FROM "new_rows"
            UNION ALL
            SELECT "workspace_id", "intent_level", "crm_status", "country", floor("intent_score")::smallint AS "intent_score_floor", -1 AS n FROM "old_rows"
        ) moves
        GROUP BY "workspace_id", "intent_level", "crm_status", "country", "intent_score_floor" HAVING sum(n) <> 0
        ON CONFLICT ("workspace_id", "txid", "intent_level", "crm_status", "country", "intent_score_floor")
            DO UPDATE SET "companies" = "company_filter_count_deltas"."companies" + excluded."companies";
    END IF;
    IF pg_current_xact_id()::text::bigint % 64 = 0 THEN
        FOR workspace IN
            SELECT DISTINCT "workspace_id" FROM "company_filter_count_deltas"
            WHERE "txid" = pg_current_xact_id() ORDER BY 1
        LOOP
            PERFORM "company_filter_counts_fold"(workspace);
        END LOOP;
    END IF;
    RETURN NULL;
END
$$;

CREATE FUNCTION "lead_filter_counts_fold"(workspace TEXT) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF NOT pg_try_advisory_xact_lock(22359, hashtext(workspace)) THEN
        RETURN;
    END IF;
    WITH folded AS (
        DELETE FROM "lead_filter_count_deltas"
        WHERE "workspace_id" = workspace AND "txid" < pg_snapshot_xmin(pg_current_snapshot())
        RETURNING "intent_level", "status", "assigned_to_id", "intent_score_floor", "leads"
    )
    INSERT INTO "lead_filter_counts" ("workspace_id", "intent_level", "status", "assigned_to_id", "intent_score_floor", "leads")
    SELECT workspace, "intent_level", "status", "assigned_to_id", "intent_score_floor", sum("leads") FROM folded GROUP BY "intent_level", "status", "assigned_to_id", "intent_score_floor" ORDER BY "intent_level", "status", "assigned_to_id", "intent_score_floor"
    ON CONFLICT ("workspace_id", "intent_level", "status", "assigned_to_id", "intent_score_floor")
        DO UPDATE SET "leads" = "lead_filter_counts"."leads" + excluded."leads";
END
$$;

CREATE FUNCTION "lead_filter_counts_apply"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    workspace TEXT;
BEGIN
    -- Transition tables exist only for the events that have them (see the day counts).
    IF TG_OP = 'INSERT' THEN
        INSERT INTO "lead_filter_count_deltas" ("workspace_id", "txid", "intent_level", "status", "assigned_to_id", "intent_score_floor", "leads")
        SELECT "workspace_id", pg_current_xact_id(), "intent_level", "status", "assigned_to_id", "intent_score_floor", sum(n) FROM (SELECT "workspace_id", "intent_level", "status", coalesce("assigned_to_id", '') AS "assigned_to_id", floor("intent_score")::smallint AS "intent_score_floor", 1 AS n FROM "new_rows") moves
        GROUP BY "workspace_id", "intent_level", "status", "assigned_to_id", "intent_score_floor" HAVING sum(n) <> 0
        ON CONFLICT ("workspace_id", "txid", "intent_level", "status", "assigned_to_id", "intent_score_floor")
            DO UPDATE SET "leads" = "lead_filter_count_deltas"."leads" + excluded."leads";
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO "lead_filter_count_deltas" ("workspace_id", "txid", "intent_level", "status", "assigned_to_id", "intent_score_floor", "leads")
        SELECT "workspace_id", pg_current_xact_id(), "intent_level", "status", "assigned_to_id", "intent_score_floor", sum(n) FROM (SELECT "workspace_id", "intent_level", "status", coalesce("assigned_to_id", '') AS "assigned_to_id", floor("intent_score")::smallint AS "intent_score_floor", -1 AS n FROM "old_rows") moves
        GROUP BY "workspace_id", "intent_level", "status", "assigned_to_id", "intent_score_floor" HAVING sum(n) <> 0
        ON CONFLICT ("workspace_id", "txid", "intent_level", "status", "assigned_to_id", "intent_score_floor")
            DO UPDATE SET "leads" = "lead_filter_count_deltas"."leads" + excluded."leads";
    ELSE
        INSERT INTO "lead_filter_count_deltas" ("workspace_id", "txid", "intent_level", "status", "assigned_to_id", "intent_score_floor", "leads")
        SELECT "workspace_id", pg_current_xact_id(), "intent_level", "status", "assigned_to_id", "intent_score_floor", sum(n) FROM (
            SELECT "workspace_id", "intent_level", "status", coalesce("assigned_to_id", '') AS "assigned_to_id", floor("intent_score")::smallint AS "intent_score_floor", 1 AS n FROM "new_rows"
            UNION ALL
            SELECT "workspace_id", "intent_level", "status", coalesce("assigned_to_id", '') AS "assigned_to_id", floor("intent_score")::smallint AS "intent_score_floor", -1 AS n FROM "old_rows"
        ) moves
        GROUP BY "workspace_id", "intent_level", "status", "assigned_to_id", "intent_score_floor" HAVING sum(n) <> 0
        ON CONFLICT ("workspace_id", "txid", "intent_level", "status", "assigned_to_id", "intent_score_floor")
            DO UPDATE SET "leads" = "lead_filter_count_deltas"."leads" + excluded."leads";
    END IF;
    IF pg_current_xact_id()::text::bigint % 64 = 0 THEN
        FOR workspace IN
            SELECT DISTINCT "workspace_id" FROM "lead_filter_count_deltas"
            WHERE "txid" = pg_current_xact_id() ORDER BY 1
        LOOP
            PERFORM "lead_filter_counts_fold"(workspace);
        END LOOP;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER "companies_filter_count_insert" AFTER INSERT ON "companies"
    REFERENCING NEW TABLE AS "new_rows" FOR EACH STATEMENT EXECUTE FUNCTION "company_filter_counts_apply"();
CREATE TRIGGER "companies_filter_count_update" AFTER UPDATE ON "companies"
    REFERENCING OLD TABLE AS "old_rows" NEW TABLE AS "new_rows" FOR EACH STATEMENT EXECUTE FUNCTION "company_filter_counts_apply"();
CREATE TRIGGER "companies_filter_count_delete" AFTER DELETE ON "companies"
    REFERENCING OLD TABLE AS "old_rows" FOR EACH STATEMENT EXECUTE FUNCTION "company_filter_counts_apply"();

CREATE TRIGGER "leads_filter_count_insert" AFTER INSERT ON "leads"
    REFERENCING NEW TABLE AS "new_rows" FOR EACH STATEMENT EXECUTE FUNCTION "lead_filter_counts_apply"();
CREATE TRIGGER "leads_filter_count_update" AFTER UPDATE ON "leads"
    REFERENCING OLD TABLE AS "old_rows" NEW TABLE AS "new_rows" FOR EACH STATEMENT EXECUTE FUNCTION "lead_filter_counts_apply"();
CREATE TRIGGER "leads_filter_count_delete" AFTER DELETE ON "leads"
    REFERENCING OLD TABLE AS "old_rows" FOR EACH STATEMENT EXECUTE FUNCTION "lead_filter_counts_apply"();

-- TRUNCATE fires no transition trigger: it empties the counts with the rows.
CREATE FUNCTION "filter_counts_truncate"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_TABLE_NAME = 'companies' THEN
        DELETE FROM "company_filter_counts";
        DELETE FROM "company_filter_count_deltas";
    ELSE
        DELETE FROM "lead_filter_counts";
        DELETE FROM "lead_filter_count_deltas";
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER "companies_filter_count_truncate" AFTER TRUNCATE ON "companies"
    FOR EACH STATEMENT EXECUTE FUNCTION "filter_counts_truncate"();
CREATE TRIGGER "leads_filter_count_truncate" AFTER TRUNCATE ON "leads"
    FOR EACH STATEMENT EXECUTE FUNCTION "filter_counts_truncate"();

-- The rows already there.
INSERT INTO "company_filter_counts"
    ("workspace_id", "intent_level", "crm_status", "country", "intent_score_floor", "companies")
SELECT "workspace_id", "intent_level", "crm_status", "country", floor("intent_score")::smallint, count(*)
FROM "companies" GROUP BY 1, 2, 3, 4, 5;
INSERT INTO "lead_filter_counts"
    ("workspace_id", "intent_level", "status", "assigned_to_id", "intent_score_floor", "leads")
SELECT "workspace_id", "intent_level", "status", coalesce("assigned_to_id", ''), floor("intent_score")::smallint, count(*)
FROM "leads" GROUP BY 1, 2, 3, 4, 5;

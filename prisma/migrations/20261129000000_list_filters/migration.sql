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
--    at most. A `minIntentScore` with a fraction (70.5) also counts, from the filter index, the
--    rows of its own whole point below it (list-page-sql.ts). Kept like the per-day counts
--    (migration 20261123000000_list_totals): statement-level triggers in the writing transaction,
--    one grouped delta per combination a statement touches, upserted in key order so that
--    concurrent writers cannot deadlock. A lead's missing assignee is counted under ''.
CREATE TABLE "company_filter_counts" (
    "workspace_id" TEXT NOT NULL,
    "intent_level" "IntentLevel" NOT NULL,
    "crm_status" "CrmStatus" NOT NULL,
    "country" TEXT NOT NULL,
    "intent_score_floor" SMALLINT NOT NULL,
    "companies" BIGINT NOT NULL,

    CONSTRAINT "company_filter_counts_pkey"
        PRIMARY KEY ("workspace_id", "intent_level", "crm_status", "country", "intent_score_floor")
);

CREATE TABLE "lead_filter_counts" (
    "workspace_id" TEXT NOT NULL,
    "intent_level" "IntentLevel" NOT NULL,
    "status" "LeadStatus" NOT NULL,
    "assigned_to_id" TEXT NOT NULL,
    "intent_score_floor" SMALLINT NOT NULL,
    "leads" BIGINT NOT NULL,

    CONSTRAINT "lead_filter_counts_pkey"
        PRIMARY KEY ("workspace_id", "intent_level", "status", "assigned_to_id", "intent_score_floor")
);

CREATE FUNCTION "company_filter_counts_apply"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- Transition tables exist only for the events that have them (see the day counts).
    IF TG_OP = 'INSERT' THEN
        INSERT INTO "company_filter_counts" ("workspace_id", "intent_level", "crm_status", "country", "intent_score_floor", "companies")
        SELECT "workspace_id", "intent_level", "crm_status", "country", "intent_score_floor", sum(n) FROM (SELECT "workspace_id", "intent_level", "crm_status", "country", floor("intent_score")::smallint AS "intent_score_floor", 1 AS n FROM "new_rows") moves
        GROUP BY 1, 2, 3, 4, 5 HAVING sum(n) <> 0 ORDER BY 1, 2, 3, 4, 5
        ON CONFLICT ("workspace_id", "intent_level", "crm_status", "country", "intent_score_floor")
            DO UPDATE SET "companies" = "company_filter_counts"."companies" + excluded."companies";
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO "company_filter_counts" ("workspace_id", "intent_level", "crm_status", "country", "intent_score_floor", "companies")
        SELECT "workspace_id", "intent_level", "crm_status", "country", "intent_score_floor", sum(n) FROM (SELECT "workspace_id", "intent_level", "crm_status", "country", floor("intent_score")::smallint AS "intent_score_floor", -1 AS n FROM "old_rows") moves
        GROUP BY 1, 2, 3, 4, 5 HAVING sum(n) <> 0 ORDER BY 1, 2, 3, 4, 5
        ON CONFLICT ("workspace_id", "intent_level", "crm_status", "country", "intent_score_floor")
            DO UPDATE SET "companies" = "company_filter_counts"."companies" + excluded."companies";
    ELSE
        INSERT INTO "company_filter_counts" ("workspace_id", "intent_level", "crm_status", "country", "intent_score_floor", "companies")
        SELECT "workspace_id", "intent_level", "crm_status", "country", "intent_score_floor", sum(n) FROM (
            SELECT "workspace_id", "intent_level", "crm_status", "country", floor("intent_score")::smallint AS "intent_score_floor", 1 AS n FROM "new_rows"
            UNION ALL
            SELECT "workspace_id", "intent_level", "crm_status", "country", floor("intent_score")::smallint AS "intent_score_floor", -1 AS n FROM "old_rows"
        ) moves
        GROUP BY 1, 2, 3, 4, 5 HAVING sum(n) <> 0 ORDER BY 1, 2, 3, 4, 5
        ON CONFLICT ("workspace_id", "intent_level", "crm_status", "country", "intent_score_floor")
            DO UPDATE SET "companies" = "company_filter_counts"."companies" + excluded."companies";
    END IF;
    RETURN NULL;
END
$$;

CREATE FUNCTION "lead_filter_counts_apply"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- Transition tables exist only for the events that have them (see the day counts).
    IF TG_OP = 'INSERT' THEN
        INSERT INTO "lead_filter_counts" ("workspace_id", "intent_level", "status", "assigned_to_id", "intent_score_floor", "leads")
        SELECT "workspace_id", "intent_level", "status", "assigned_to_id", "intent_score_floor", sum(n) FROM (SELECT "workspace_id", "intent_level", "status", coalesce("assigned_to_id", '') AS "assigned_to_id", floor("intent_score")::smallint AS "intent_score_floor", 1 AS n FROM "new_rows") moves
        GROUP BY 1, 2, 3, 4, 5 HAVING sum(n) <> 0 ORDER BY 1, 2, 3, 4, 5
        ON CONFLICT ("workspace_id", "intent_level", "status", "assigned_to_id", "intent_score_floor")
            DO UPDATE SET "leads" = "lead_filter_counts"."leads" + excluded."leads";
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO "lead_filter_counts" ("workspace_id", "intent_level", "status", "assigned_to_id", "intent_score_floor", "leads")
        SELECT "workspace_id", "intent_level", "status", "assigned_to_id", "intent_score_floor", sum(n) FROM (SELECT "workspace_id", "intent_level", "status", coalesce("assigned_to_id", '') AS "assigned_to_id", floor("intent_score")::smallint AS "intent_score_floor", -1 AS n FROM "old_rows") moves
        GROUP BY 1, 2, 3, 4, 5 HAVING sum(n) <> 0 ORDER BY 1, 2, 3, 4, 5
        ON CONFLICT ("workspace_id", "intent_level", "status", "assigned_to_id", "intent_score_floor")
            DO UPDATE SET "leads" = "lead_filter_counts"."leads" + excluded."leads";
    ELSE
        INSERT INTO "lead_filter_counts" ("workspace_id", "intent_level", "status", "assigned_to_id", "intent_score_floor", "leads")
        SELECT "workspace_id", "intent_level", "status", "assigned_to_id", "intent_score_floor", sum(n) FROM (
            SELECT "workspace_id", "intent_level", "status", coalesce("assigned_to_id", '') AS "assigned_to_id", floor("intent_score")::smallint AS "intent_score_floor", 1 AS n FROM "new_rows"
            UNION ALL
            SELECT "workspace_id", "intent_level", "status", coalesce("assigned_to_id", '') AS "assigned_to_id", floor("intent_score")::smallint AS "intent_score_floor", -1 AS n FROM "old_rows"
        ) moves
        GROUP BY 1, 2, 3, 4, 5 HAVING sum(n) <> 0 ORDER BY 1, 2, 3, 4, 5
        ON CONFLICT ("workspace_id", "intent_level", "status", "assigned_to_id", "intent_score_floor")
            DO UPDATE SET "leads" = "lead_filter_counts"."leads" + excluded."leads";
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
    ELSE
        DELETE FROM "lead_filter_counts";
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

-- Exact `total`s at a cost that does not grow with the workspace.
--
-- Counting a million-company workspace on every page request reads a million index entries. Instead
-- each list keeps its rows' number per workspace and UTC day of the filtered column (companies:
-- last_seen, leads: created_at). A total is then the sum of at most one row per day, plus, with a
-- `since` filter, an index count of the rows of since's own day that are at or after it.
--
-- The counts are kept by statement-level triggers in the writing transaction, whoever writes, so a
-- reader's snapshot always sees counts and rows that agree: `total` stays exact. A statement adds
-- one grouped delta per day it touches; an update that leaves the day alone (a new score) writes
-- nothing. The days are UTC days whatever the session's time zone (date_bin on absolute time).

-- CreateTable
CREATE TABLE "company_day_counts" (
    "workspace_id" TEXT NOT NULL,
    "day" TIMESTAMPTZ NOT NULL,
    "companies" BIGINT NOT NULL,

    CONSTRAINT "company_day_counts_pkey" PRIMARY KEY ("workspace_id", "day")
);

-- CreateTable
CREATE TABLE "lead_day_counts" (
    "workspace_id" TEXT NOT NULL,
    "day" TIMESTAMPTZ NOT NULL,
    "leads" BIGINT NOT NULL,

    CONSTRAINT "lead_day_counts_pkey" PRIMARY KEY ("workspace_id", "day")
);

-- The day a row is counted in. The lists' SQL uses the same expression.
CREATE FUNCTION "count_day"(instant TIMESTAMPTZ) RETURNS TIMESTAMPTZ
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN date_bin('1 day', instant, TIMESTAMPTZ '2000-01-01 00:00:00+00');

CREATE FUNCTION "company_day_counts_apply"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- Transition tables exist only for the events that have them: old for UPDATE and DELETE, new
    -- for INSERT and UPDATE. An INSERT … ON CONFLICT DO UPDATE fires both the INSERT and the UPDATE
    -- trigger, each with its own rows. Every branch upserts its deltas in (workspace, day) order,
    -- so that concurrent writers lock count rows in the same order and cannot deadlock; writers of
    -- one workspace and day queue on its count row until they commit.
    IF TG_OP = 'INSERT' THEN
        INSERT INTO "company_day_counts" ("workspace_id", "day", "companies")
        SELECT "workspace_id", "count_day"("last_seen"), count(*) FROM "new_rows" GROUP BY 1, 2 ORDER BY 1, 2
        ON CONFLICT ("workspace_id", "day") DO UPDATE
            SET "companies" = "company_day_counts"."companies" + excluded."companies";
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO "company_day_counts" ("workspace_id", "day", "companies")
        SELECT "workspace_id", "count_day"("last_seen"), -count(*) FROM "old_rows" GROUP BY 1, 2 ORDER BY 1, 2
        ON CONFLICT ("workspace_id", "day") DO UPDATE
            SET "companies" = "company_day_counts"."companies" + excluded."companies";
    ELSE
        INSERT INTO "company_day_counts" ("workspace_id", "day", "companies")
        SELECT "workspace_id", "day", sum(n) FROM (
            SELECT "workspace_id", "count_day"("last_seen") AS "day", 1 AS n FROM "new_rows"
            UNION ALL
            SELECT "workspace_id", "count_day"("last_seen"), -1 FROM "old_rows"
        ) moves
        GROUP BY 1, 2 HAVING sum(n) <> 0 ORDER BY 1, 2
        ON CONFLICT ("workspace_id", "day") DO UPDATE
            SET "companies" = "company_day_counts"."companies" + excluded."companies";
    END IF;
    RETURN NULL;
END
$$;

CREATE FUNCTION "lead_day_counts_apply"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO "lead_day_counts" ("workspace_id", "day", "leads")
        SELECT "workspace_id", "count_day"("created_at"), count(*) FROM "new_rows" GROUP BY 1, 2 ORDER BY 1, 2
        ON CONFLICT ("workspace_id", "day") DO UPDATE
            SET "leads" = "lead_day_counts"."leads" + excluded."leads";
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO "lead_day_counts" ("workspace_id", "day", "leads")
        SELECT "workspace_id", "count_day"("created_at"), -count(*) FROM "old_rows" GROUP BY 1, 2 ORDER BY 1, 2
        ON CONFLICT ("workspace_id", "day") DO UPDATE
            SET "leads" = "lead_day_counts"."leads" + excluded."leads";
    ELSE
        INSERT INTO "lead_day_counts" ("workspace_id", "day", "leads")
        SELECT "workspace_id", "day", sum(n) FROM (
            SELECT "workspace_id", "count_day"("created_at") AS "day", 1 AS n FROM "new_rows"
            UNION ALL
            SELECT "workspace_id", "count_day"("created_at"), -1 FROM "old_rows"
        ) moves
        GROUP BY 1, 2 HAVING sum(n) <> 0 ORDER BY 1, 2
        ON CONFLICT ("workspace_id", "day") DO UPDATE
            SET "leads" = "lead_day_counts"."leads" + excluded."leads";
    END IF;
    RETURN NULL;
END
$$;

-- One trigger per event: PostgreSQL allows transition tables only on single-event triggers.
CREATE TRIGGER "companies_count_insert" AFTER INSERT ON "companies"
    REFERENCING NEW TABLE AS "new_rows" FOR EACH STATEMENT EXECUTE FUNCTION "company_day_counts_apply"();
CREATE TRIGGER "companies_count_update" AFTER UPDATE ON "companies"
    REFERENCING OLD TABLE AS "old_rows" NEW TABLE AS "new_rows" FOR EACH STATEMENT EXECUTE FUNCTION "company_day_counts_apply"();
CREATE TRIGGER "companies_count_delete" AFTER DELETE ON "companies"
    REFERENCING OLD TABLE AS "old_rows" FOR EACH STATEMENT EXECUTE FUNCTION "company_day_counts_apply"();

CREATE TRIGGER "leads_count_insert" AFTER INSERT ON "leads"
    REFERENCING NEW TABLE AS "new_rows" FOR EACH STATEMENT EXECUTE FUNCTION "lead_day_counts_apply"();
CREATE TRIGGER "leads_count_update" AFTER UPDATE ON "leads"
    REFERENCING OLD TABLE AS "old_rows" NEW TABLE AS "new_rows" FOR EACH STATEMENT EXECUTE FUNCTION "lead_day_counts_apply"();
CREATE TRIGGER "leads_count_delete" AFTER DELETE ON "leads"
    REFERENCING OLD TABLE AS "old_rows" FOR EACH STATEMENT EXECUTE FUNCTION "lead_day_counts_apply"();

-- TRUNCATE fires no row or transition trigger: it empties the counts with the rows.
CREATE FUNCTION "day_counts_truncate"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_TABLE_NAME = 'companies' THEN
        DELETE FROM "company_day_counts";
    ELSE
        DELETE FROM "lead_day_counts";
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER "companies_count_truncate" AFTER TRUNCATE ON "companies"
    FOR EACH STATEMENT EXECUTE FUNCTION "day_counts_truncate"();
CREATE TRIGGER "leads_count_truncate" AFTER TRUNCATE ON "leads"
    FOR EACH STATEMENT EXECUTE FUNCTION "day_counts_truncate"();

-- The rows already there.
INSERT INTO "company_day_counts" ("workspace_id", "day", "companies")
SELECT "workspace_id", "count_day"("last_seen"), count(*) FROM "companies" GROUP BY 1, 2;
INSERT INTO "lead_day_counts" ("workspace_id", "day", "leads")
SELECT "workspace_id", "count_day"("created_at"), count(*) FROM "leads" GROUP BY 1, 2;

-- Covering indexes, so that a page's ids come from the index alone (no table row is read for the
-- rows an offset skips), with or without `since`: walking the order index checks the filtered
-- column in the index, and a selective `since` reads its range with the order columns at hand.
-- Prisma's schema cannot state INCLUDE; the names stay those of schema.prisma.
DROP INDEX "companies_workspace_score_id_idx";
CREATE INDEX "companies_workspace_score_id_idx" ON "companies"("workspace_id", "intent_score" DESC, "id") INCLUDE ("last_seen");
DROP INDEX "companies_workspace_last_seen_idx";
CREATE INDEX "companies_workspace_last_seen_idx" ON "companies"("workspace_id", "last_seen") INCLUDE ("intent_score", "id");
DROP INDEX "leads_workspace_score_id_idx";
CREATE INDEX "leads_workspace_score_id_idx" ON "leads"("workspace_id", "intent_score" DESC, "id") INCLUDE ("created_at");
DROP INDEX "leads_workspace_created_at_idx";
CREATE INDEX "leads_workspace_created_at_idx" ON "leads"("workspace_id", "created_at") INCLUDE ("intent_score", "id");

-- Visits and their page views: the evidence behind a company's intent score (docs/api.md,
-- "Visit"). Page views outnumber companies a hundred to one, so both tables are partitioned by
-- month of the visit's start (PostgreSQL's declarative partitioning): retention drops a month
-- whole instead of deleting rows (`admin prune-visits`, which also makes the months ahead), and
-- a read of recent visits touches the recent months only. A page view lives in the partition of
-- its visit's month (its `visit_started_at`), so that a visit and its pages go together.
--
-- Keys: every primary key and index starts with workspace_id, the distribution column a
-- workspace-sharded cluster (Citus) would use, and the tables' keys include the partition key, as
-- PostgreSQL requires of a partitioned table's unique constraints (docs/scaling.md). An id is
-- unique within its workspace: the import refuses one that another workspace holds.
--
-- Nothing here locks the tables the service reads: the new tables are empty, and the foreign key
-- to companies takes a SHARE ROW EXCLUSIVE lock on companies (writers wait a moment, readers
-- never).

CREATE TYPE "DeviceType" AS ENUM ('desktop', 'mobile', 'tablet', 'other');

-- The bounds are the field map's (src/visits/visit.fields.ts); test/e2e/lists/field-bounds.e2e-spec.ts
-- compares them. Ids and paths are compared byte for byte (COLLATE "C"): the order of a list's
-- ties, and page patterns, which match paths case-sensitively and by prefix (an index range).
CREATE TABLE "visits" (
    "workspace_id" TEXT NOT NULL,
    "id" TEXT COLLATE "C" NOT NULL,
    "company_id" TEXT NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL,
    "ended_at" TIMESTAMPTZ(3) NOT NULL,
    -- Whole seconds from start to end, rounded down.
    "duration_seconds" INTEGER NOT NULL
        GENERATED ALWAYS AS (floor(extract(epoch FROM "ended_at" - "started_at"))::integer) STORED,
    -- Derived from the page views by the writer (the import): what a list shows without them.
    "page_view_count" INTEGER NOT NULL,
    "landing_page" TEXT COLLATE "C" NOT NULL,
    "referrer" TEXT,
    "source" TEXT,
    "medium" TEXT,
    "campaign" TEXT,
    "term" TEXT,
    "content" TEXT,
    "device_type" "DeviceType" NOT NULL,
    "country" TEXT,

    CONSTRAINT "visits_pkey" PRIMARY KEY ("workspace_id", "id", "started_at"),
    CONSTRAINT "visits_id_length" CHECK (char_length("id") <= 100),
    CONSTRAINT "visits_company_id_length" CHECK (char_length("company_id") <= 100),
    CONSTRAINT "visits_landing_page_length" CHECK (char_length("landing_page") <= 2048),
    CONSTRAINT "visits_referrer_length" CHECK (char_length("referrer") <= 2048),
    CONSTRAINT "visits_source_length" CHECK (char_length("source") <= 200),
    CONSTRAINT "visits_medium_length" CHECK (char_length("medium") <= 200),
    CONSTRAINT "visits_campaign_length" CHECK (char_length("campaign") <= 200),
    CONSTRAINT "visits_term_length" CHECK (char_length("term") <= 200),
    CONSTRAINT "visits_content_length" CHECK (char_length("content") <= 200),
    CONSTRAINT "visits_country_length" CHECK (char_length("country") <= 2),
    CONSTRAINT "visits_country_code" CHECK ("country" ~ '^[A-Z]{2}$'),
    CONSTRAINT "visits_span" CHECK ("ended_at" >= "started_at" AND "ended_at" <= "started_at" + interval '24 hours'),
    CONSTRAINT "visits_page_view_count" CHECK ("page_view_count" BETWEEN 1 AND 500),
    -- Deleting a company deletes its visits (and, by the trigger below, their page views).
    CONSTRAINT "visits_company_fkey" FOREIGN KEY ("company_id", "workspace_id")
        REFERENCES "companies" ("id", "workspace_id") ON DELETE CASCADE
) PARTITION BY RANGE ("started_at");

-- No foreign key to visits: checked per page view it made inserting them 1.6 times slower (300,000
-- page views: 3.9 s against 2.4 s), and the writer (the import) writes a visit with its pages in
-- one statement; deleting a visit deletes its pages (trigger below), and a month's partitions of
-- both tables are dropped together.
CREATE TABLE "page_views" (
    "workspace_id" TEXT NOT NULL,
    "visit_id" TEXT COLLATE "C" NOT NULL,
    "visit_started_at" TIMESTAMPTZ(3) NOT NULL,
    -- The page's place in its visit, from 0: `viewedAt` order, ties in the order given.
    "position" SMALLINT NOT NULL,
    -- The visit's company, so that "companies that viewed a page" reads this table alone.
    "company_id" TEXT NOT NULL,
    "hostname" TEXT NOT NULL,
    "path" TEXT COLLATE "C" NOT NULL,
    "title" TEXT,
    "viewed_at" TIMESTAMPTZ(3) NOT NULL,
    "seconds_on_page" INTEGER,

    CONSTRAINT "page_views_pkey" PRIMARY KEY ("workspace_id", "visit_id", "visit_started_at", "position"),
    CONSTRAINT "page_views_hostname_length" CHECK (char_length("hostname") <= 253),
    CONSTRAINT "page_views_path_length" CHECK (char_length("path") <= 2048),
    CONSTRAINT "page_views_title_length" CHECK (char_length("title") <= 1000),
    -- A path, without its query string or fragment (which carry personal data).
    CONSTRAINT "page_views_path_form" CHECK ("path" LIKE '/%' AND strpos("path", '?') = 0 AND strpos("path", '#') = 0),
    CONSTRAINT "page_views_position" CHECK ("position" BETWEEN 0 AND 499),
    CONSTRAINT "page_views_seconds_on_page" CHECK ("seconds_on_page" >= 0),
    CONSTRAINT "page_views_within_visit" CHECK ("viewed_at" >= "visit_started_at" AND "viewed_at" <= "visit_started_at" + interval '24 hours')
) PARTITION BY RANGE ("visit_started_at");

-- The lists' order (startedAt descending, id descending), read backwards; with `companyId`, and
-- `GET /v1/companies/{id}/visits`, and the foreign key's cascade.
CREATE INDEX "visits_workspace_started_idx" ON "visits" ("workspace_id", "started_at", "id");
CREATE INDEX "visits_workspace_company_started_idx" ON "visits" ("workspace_id", "company_id", "started_at", "id");
-- The import's check that an id is not another workspace's.
CREATE INDEX "visits_id_idx" ON "visits" ("id");
-- Page patterns: the page views of a path, or of a range of paths (a prefix), from a point in
-- time. Enough to answer "which companies viewed it" and "which visits" from the index alone.
CREATE INDEX "page_views_workspace_path_idx" ON "page_views" ("workspace_id", "path", "viewed_at")
    INCLUDE ("company_id", "visit_started_at", "visit_id");

-- Makes the monthly partitions of both tables from the month of `first` to the month of `last`,
-- those not there yet, and returns how many months it made. Each is created apart and attached,
-- which takes a SHARE UPDATE EXCLUSIVE lock on the partitioned table (CREATE TABLE ... PARTITION
-- OF would take an ACCESS EXCLUSIVE one, waiting for every read in flight and blocking the ones
-- behind it); attaching builds the parent's indexes on the empty table and clones its foreign key.
-- Months are UTC months. Run by this migration, `admin prune-visits` (the months ahead) and the
-- import (the months of its visits).
CREATE FUNCTION "visit_partitions_make"("first" TIMESTAMPTZ, "last" TIMESTAMPTZ)
    RETURNS INTEGER LANGUAGE plpgsql AS $$
DECLARE
    month TIMESTAMP := date_trunc('month', "first" AT TIME ZONE 'UTC');
    made INTEGER := 0;
    suffix TEXT;
    lower_bound TEXT;
    upper_bound TEXT;
BEGIN
    WHILE month <= "last" AT TIME ZONE 'UTC' LOOP
        suffix := to_char(month, 'YYYY_MM');
        lower_bound := to_char(month, 'YYYY-MM-DD') || ' 00:00:00+00';
        upper_bound := to_char(month + interval '1 month', 'YYYY-MM-DD') || ' 00:00:00+00';
        IF to_regclass(format('%I', 'visits_' || suffix)) IS NULL THEN
            EXECUTE format('CREATE TABLE %I (LIKE "visits" INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING GENERATED)', 'visits_' || suffix);
            EXECUTE format('ALTER TABLE "visits" ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', 'visits_' || suffix, lower_bound, upper_bound);
            made := made + 1;
        END IF;
        IF to_regclass(format('%I', 'page_views_' || suffix)) IS NULL THEN
            EXECUTE format('CREATE TABLE %I (LIKE "page_views" INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', 'page_views_' || suffix);
            EXECUTE format('ALTER TABLE "page_views" ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', 'page_views_' || suffix, lower_bound, upper_bound);
        END IF;
        month := month + interval '1 month';
    END LOOP;
    RETURN made;
END
$$;

-- A visit's page views go with it, whoever deletes it: the import replacing it, `admin delete
-- --visits`, or a company's deletion (the foreign key's cascade, which runs a DELETE per company).
-- Per statement, over its transition table.
CREATE FUNCTION "visits_delete_pages"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM "page_views" p
    USING "old_rows" o
    WHERE p."workspace_id" = o."workspace_id" AND p."visit_id" = o."id"
      AND p."visit_started_at" = o."started_at";
    RETURN NULL;
END
$$;

CREATE TRIGGER "visits_delete_pages" AFTER DELETE ON "visits"
    REFERENCING OLD TABLE AS "old_rows" FOR EACH STATEMENT EXECUTE FUNCTION "visits_delete_pages"();

-- Emptying visits empties their page views.
CREATE FUNCTION "visits_truncate_pages"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    TRUNCATE "page_views";
    RETURN NULL;
END
$$;

CREATE TRIGGER "visits_truncate_pages" AFTER TRUNCATE ON "visits"
    FOR EACH STATEMENT EXECUTE FUNCTION "visits_truncate_pages"();

-- The thirteen months before now (the default retention is 395 days) and the two after.
SELECT "visit_partitions_make"(now() - interval '13 months', now() + interval '2 months');

-- The bound on contacts per company (20261125000000_field_bounds), counted company by company.
--
-- Its count joined the contacts table to the transition table on (workspace_id, company_id), and
-- the planner, with no statistics on the transition table and stale ones on contacts (a bulk load
-- is one transaction), chose a merge join on workspace_id alone, filtering company_id afterwards:
-- every new row met every contact of the workspace. Measured: 60,000 contacts for 20,000 companies
-- of one workspace in one statement took 81 s, 79 s of it in this count (600 million rows
-- removed by the join filter); the benchmark's 3 million contacts of its large workspace did not
-- finish in 15 minutes. An import of 30,000 contacts took about a minute.
--
-- Now each company of the statement is counted on its own, through the (company_id, ...) index: a
-- correlated subquery with an aggregate is never flattened into a join, so no statistics can make
-- the work more than one index range per company. A company id is unique across workspaces
-- (companies' primary key) and a contact's (company_id, workspace_id) references it, so the
-- company alone selects its contacts. The rest of the function is unchanged.
-- test/change-tracking-plans.e2e-spec.ts pins it.

CREATE OR REPLACE FUNCTION "contacts_per_company_check"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    over_workspace TEXT;
    over_company TEXT;
    over_contacts BIGINT;
BEGIN
    -- EXECUTE: planned for the transition table at hand (see 20261124100000_change_tracking_plans).
    EXECUTE $q$
        SELECT FROM "companies" c
        WHERE (c."workspace_id", c."id") IN (SELECT "workspace_id", "company_id" FROM "new_rows")
        ORDER BY c."workspace_id", c."id"
        FOR NO KEY UPDATE
    $q$;
    EXECUTE $q$
        SELECT n."workspace_id", n."company_id", n."contacts"
        FROM (
            SELECT s."workspace_id", s."company_id",
                (SELECT count(*) FROM "contacts" t WHERE t."company_id" = s."company_id") AS "contacts"
            FROM (SELECT DISTINCT "workspace_id", "company_id" FROM "new_rows") s
        ) n
        WHERE n."contacts" > 10
        ORDER BY n."workspace_id", n."company_id"
        LIMIT 1
    $q$ INTO over_workspace, over_company, over_contacts;
    IF over_contacts IS NOT NULL THEN
        RAISE EXCEPTION 'company % has % contacts, more than 10', over_company, over_contacts
            USING ERRCODE = 'check_violation',
                CONSTRAINT = 'contacts_per_company',
                TABLE = 'contacts',
                DETAIL = json_build_object(
                    'workspaceId', over_workspace,
                    'companyId', over_company,
                    'contacts', over_contacts,
                    'maximum', 10)::text;
    END IF;
    RETURN NULL;
END
$$;

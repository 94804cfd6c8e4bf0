-- Bounds on every text column an item's JSON is made of, and on the contacts of a company, so
-- that no writer (the import, the customer application, a hand-written statement) can store an
-- item larger than the API's contract allows, nor make a response arbitrarily large
-- (docs/api.md, "Sizes").
--
-- The bounds are the field maps' (src/companies/company.fields.ts, src/leads/lead.fields.ts),
-- where each is explained; test/field-bounds.e2e-spec.ts fails if the constraints below and the
-- maps differ. char_length counts characters (code points), as the maps' maxLength does. The
-- import checks the same bounds first and names the record and field; these constraints are the
-- guarantee. Adding them validates the rows already stored: a row beyond a bound stops the
-- migration with the constraint's name, and must be shortened first.
--
-- Ids, names and the other text columns that an index holds stay far below the 2,704 bytes of a
-- B-tree entry (PostgreSQL's error 54000 otherwise): at most 4 bytes a character, 100 characters
-- an id, 200 a contact's name.

ALTER TABLE "companies"
    ADD CONSTRAINT "companies_id_length" CHECK (char_length("id") <= 100),
    ADD CONSTRAINT "companies_name_length" CHECK (char_length("name") <= 200),
    ADD CONSTRAINT "companies_domain_length" CHECK (char_length("domain") <= 253),
    ADD CONSTRAINT "companies_industry_length" CHECK (char_length("industry") <= 100),
    ADD CONSTRAINT "companies_size_length" CHECK (char_length("size") <= 50),
    ADD CONSTRAINT "companies_country_length" CHECK (char_length("country") <= 100),
    ADD CONSTRAINT "companies_city_length" CHECK (char_length("city") <= 100),
    ADD CONSTRAINT "companies_revenue_length" CHECK (char_length("revenue") <= 50),
    ADD CONSTRAINT "companies_siren_length" CHECK (char_length("siren") <= 50);
ALTER TABLE "contacts"
    ADD CONSTRAINT "contacts_id_length" CHECK (char_length("id") <= 100),
    ADD CONSTRAINT "contacts_name_length" CHECK (char_length("name") <= 200),
    ADD CONSTRAINT "contacts_job_title_length" CHECK (char_length("job_title") <= 200),
    ADD CONSTRAINT "contacts_email_length" CHECK (char_length("email") <= 254),
    ADD CONSTRAINT "contacts_phone_length" CHECK (char_length("phone") <= 50),
    ADD CONSTRAINT "contacts_linkedin_length" CHECK (char_length("linkedin") <= 300);
ALTER TABLE "leads"
    ADD CONSTRAINT "leads_id_length" CHECK (char_length("id") <= 100),
    ADD CONSTRAINT "leads_company_id_length" CHECK (char_length("company_id") <= 100),
    ADD CONSTRAINT "leads_contact_name_length" CHECK (char_length("contact_name") <= 200),
    ADD CONSTRAINT "leads_contact_title_length" CHECK (char_length("contact_title") <= 200),
    ADD CONSTRAINT "leads_signal_length" CHECK (char_length("signal") <= 1000),
    ADD CONSTRAINT "leads_recommended_action_length" CHECK (char_length("recommended_action") <= 1000),
    ADD CONSTRAINT "leads_contact_email_length" CHECK (char_length("contact_email") <= 254),
    ADD CONSTRAINT "leads_assigned_to_id_length" CHECK (char_length("assigned_to_id") <= 100);

-- At most 10 contacts per company (MAX_CONTACTS_PER_COMPANY in company.fields.ts), checked after
-- each statement that adds contacts or moves them to another company, over its transition table,
-- like the day counts and the change tracking: an import of 10,000 contacts runs it once, not
-- once per row.
--
-- Two transactions adding contacts to the same company at once would each count only their own:
-- the companies concerned are first locked (FOR NO KEY UPDATE, in (workspace_id, id) order, so
-- that concurrent writers queue rather than deadlock), and the count, a new snapshot under READ
-- COMMITTED, then sees what the other committed. The lock does not block readers, nor writers
-- that only reference the company (a foreign key's check takes FOR KEY SHARE); a company the
-- transaction has just written is already locked by it.
--
-- The error is a check_violation (23514) naming the constraint `contacts_per_company`, with the
-- company in DETAIL as JSON, so that the import can name the record.
CREATE FUNCTION "contacts_per_company_check"() RETURNS trigger LANGUAGE plpgsql AS $$
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
        SELECT t."workspace_id", t."company_id", count(*)
        FROM "contacts" t
        WHERE (t."workspace_id", t."company_id") IN (SELECT "workspace_id", "company_id" FROM "new_rows")
        GROUP BY t."workspace_id", t."company_id"
        HAVING count(*) > 10
        ORDER BY t."workspace_id", t."company_id"
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

-- Named to fire before the change tracking's triggers (triggers of an event fire in name order):
-- the company's row is locked before its change row, the order the import's own writes take.
CREATE TRIGGER "contacts_bound_insert" AFTER INSERT ON "contacts"
    REFERENCING NEW TABLE AS "new_rows" FOR EACH STATEMENT EXECUTE FUNCTION "contacts_per_company_check"();
CREATE TRIGGER "contacts_bound_update" AFTER UPDATE ON "contacts"
    REFERENCING NEW TABLE AS "new_rows" FOR EACH STATEMENT EXECUTE FUNCTION "contacts_per_company_check"();

-- The companies already stored.
DO $$
DECLARE
    over_workspace TEXT;
    over_company TEXT;
    over_contacts BIGINT;
BEGIN
    SELECT "workspace_id", "company_id", count(*) INTO over_workspace, over_company, over_contacts
    FROM "contacts" GROUP BY 1, 2 HAVING count(*) > 10 ORDER BY 1, 2 LIMIT 1;
    IF over_contacts IS NOT NULL THEN
        RAISE EXCEPTION 'company % of workspace % has % contacts, more than 10: remove some first',
            over_company, over_workspace, over_contacts
            USING ERRCODE = 'check_violation', CONSTRAINT = 'contacts_per_company';
    END IF;
END
$$;

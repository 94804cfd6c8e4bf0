-- CreateEnum
CREATE TYPE "Plan" AS ENUM ('growth', 'starter');

-- CreateEnum
CREATE TYPE "IntentLevel" AS ENUM ('hot', 'warm', 'cold');

-- CreateEnum
CREATE TYPE "CrmStatus" AS ENUM ('new', 'qualified', 'in_crm', 'contacted', 'won', 'lost');

-- CreateEnum
CREATE TYPE "Seniority" AS ENUM ('c_level', 'vp', 'director', 'manager', 'ic');

-- CreateEnum
CREATE TYPE "LeadStatus" AS ENUM ('new', 'contacted', 'qualified', 'converted', 'dismissed');

-- CreateTable
CREATE TABLE "workspaces" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "plan" "Plan" NOT NULL,
    "suspended" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "workspaces_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "api_keys" (
    "id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "hash" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_used_at" TIMESTAMPTZ(3),
    "revoked_at" TIMESTAMPTZ(3),

    CONSTRAINT "api_keys_pkey" PRIMARY KEY ("id")
);

-- CreateTable
-- Ids are compared byte by byte ("C"), so that the id tie-break of the lists is the same on every
-- server whatever its locale, and matches a plain string comparison on the client side.
CREATE TABLE "companies" (
    "id" TEXT COLLATE "C" NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "domain" TEXT NOT NULL,
    "industry" TEXT NOT NULL,
    "size" TEXT NOT NULL,
    "country" TEXT NOT NULL,
    "city" TEXT NOT NULL,
    "revenue" TEXT NOT NULL,
    "siren" TEXT,
    "intent_score" DOUBLE PRECISION NOT NULL,
    "intent_level" "IntentLevel" NOT NULL,
    "icp_score" DOUBLE PRECISION NOT NULL,
    "commercial_score" DOUBLE PRECISION NOT NULL,
    "crm_status" "CrmStatus" NOT NULL,
    "visits_count" INTEGER NOT NULL,
    "first_seen" TIMESTAMPTZ(3) NOT NULL,
    "last_seen" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "companies_pkey" PRIMARY KEY ("id"),
    -- Not expressible in the Prisma schema; the import validates the same bounds first.
    CONSTRAINT "companies_scores_check" CHECK (
        "intent_score" BETWEEN 0 AND 100
        AND "icp_score" BETWEEN 0 AND 100
        AND "commercial_score" BETWEEN 0 AND 100
        AND "visits_count" >= 0
    )
);

-- CreateTable
CREATE TABLE "contacts" (
    "id" TEXT COLLATE "C" NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "company_id" TEXT COLLATE "C" NOT NULL,
    "name" TEXT NOT NULL,
    "job_title" TEXT NOT NULL,
    "email" TEXT,
    "phone" TEXT,
    "linkedin" TEXT,
    "seniority" "Seniority" NOT NULL,

    CONSTRAINT "contacts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "leads" (
    "id" TEXT COLLATE "C" NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "company_id" TEXT COLLATE "C" NOT NULL,
    "contact_name" TEXT NOT NULL,
    "contact_title" TEXT NOT NULL,
    "contact_email" TEXT,
    "intent_score" DOUBLE PRECISION NOT NULL,
    "intent_level" "IntentLevel" NOT NULL,
    "signal" TEXT NOT NULL,
    "recommended_action" TEXT NOT NULL,
    "status" "LeadStatus" NOT NULL,
    "assigned_to_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "leads_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "leads_intent_score_check" CHECK ("intent_score" BETWEEN 0 AND 100)
);

-- CreateIndex
CREATE UNIQUE INDEX "api_keys_hash_key" ON "api_keys"("hash");

-- CreateIndex
CREATE INDEX "api_keys_workspace_id_idx" ON "api_keys"("workspace_id");

-- CreateIndex
CREATE UNIQUE INDEX "companies_id_workspace_id_key" ON "companies"("id", "workspace_id");

-- CreateIndex
CREATE INDEX "companies_workspace_score_id_idx" ON "companies"("workspace_id", "intent_score" DESC, "id");

-- CreateIndex
CREATE INDEX "companies_workspace_last_seen_idx" ON "companies"("workspace_id", "last_seen");

-- CreateIndex
CREATE INDEX "contacts_company_order_idx" ON "contacts"("company_id", "seniority", "name", "id");

-- CreateIndex
CREATE INDEX "contacts_workspace_id_idx" ON "contacts"("workspace_id");

-- CreateIndex
CREATE INDEX "leads_workspace_score_id_idx" ON "leads"("workspace_id", "intent_score" DESC, "id");

-- CreateIndex
CREATE INDEX "leads_workspace_created_at_idx" ON "leads"("workspace_id", "created_at");

-- CreateIndex
CREATE INDEX "leads_company_id_idx" ON "leads"("company_id");

-- AddForeignKey
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "companies" ADD CONSTRAINT "companies_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "contacts" ADD CONSTRAINT "contacts_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "contacts" ADD CONSTRAINT "contacts_company_id_workspace_id_fkey" FOREIGN KEY ("company_id", "workspace_id") REFERENCES "companies"("id", "workspace_id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "leads" ADD CONSTRAINT "leads_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "leads" ADD CONSTRAINT "leads_company_id_workspace_id_fkey" FOREIGN KEY ("company_id", "workspace_id") REFERENCES "companies"("id", "workspace_id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Webhooks: endpoints of a workspace, the events made for them from the change tracking, and
-- every delivery attempt.
--
-- An endpoint keeps its own position (txid, id) in the workspace's two change feeds, exactly as a
-- feed client keeps its cursor: the worker's dispatcher reads the changes past it and below the
-- feed's safe bound (src/changes/change-feed-sql.ts), makes one event per change, queues its
-- delivery and advances the position in one transaction. Nothing is lost when the worker stops or
-- the endpoint is disabled: `enable` resumes from the position where it stopped.

CREATE TABLE "webhook_endpoints" (
    "id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "event_types" TEXT[] NOT NULL,
    -- AES-256-GCM under WEBHOOK_SECRET_KEY (src/webhooks/secret-box.ts): a dump alone gives no secret.
    "secret" TEXT NOT NULL,
    -- The secret before the last rotation, signed with as well until it expires (24 hours).
    "previous_secret" TEXT,
    "previous_secret_expires_at" TIMESTAMPTZ(3),
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "disabled_reason" TEXT,
    -- The first failed attempt since the last success: three days of failures disable the endpoint.
    "failing_since" TIMESTAMPTZ(3),
    "last_success_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    -- Positions in the companies' and leads' change feeds, as in a feed cursor.
    "company_txid" xid8 NOT NULL,
    "company_id" TEXT COLLATE "C" NOT NULL DEFAULT '',
    "lead_txid" xid8 NOT NULL,
    "lead_id" TEXT COLLATE "C" NOT NULL DEFAULT '',

    CONSTRAINT "webhook_endpoints_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "webhook_endpoints_url_check" CHECK (char_length("url") <= 2048),
    CONSTRAINT "webhook_endpoints_event_types_check" CHECK (
        cardinality("event_types") > 0 AND "event_types" <@
        ARRAY['company.upserted', 'company.deleted', 'lead.upserted', 'lead.deleted']::TEXT[])
);

CREATE INDEX "webhook_endpoints_workspace_idx" ON "webhook_endpoints"("workspace_id");

ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "webhook_endpoints_workspace_id_fkey"
    FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- One event per change per endpoint. `state`: pending (queued or waiting for a retry), delivered,
-- failed (given up after the retry schedule), paused (its endpoint was disabled; queued again on
-- enable). `attempts` counts the attempts made; `lease_until` is held while one is in flight, so
-- that two workers holding a job of the same event never send it at the same time.
CREATE TABLE "webhook_events" (
    "id" TEXT NOT NULL,
    "endpoint_id" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "body" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "state" TEXT NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL,
    "lease_until" TIMESTAMPTZ(3),

    CONSTRAINT "webhook_events_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "webhook_events_state_check" CHECK ("state" IN ('pending', 'delivered', 'failed', 'paused'))
);

CREATE INDEX "webhook_events_endpoint_state_idx" ON "webhook_events"("endpoint_id", "state");

ALTER TABLE "webhook_events" ADD CONSTRAINT "webhook_events_endpoint_id_fkey"
    FOREIGN KEY ("endpoint_id") REFERENCES "webhook_endpoints"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Every attempt, for `webhook deliveries`: a status, or the error when none was received.
CREATE TABLE "webhook_attempts" (
    "id" BIGSERIAL NOT NULL,
    "event_id" TEXT NOT NULL,
    "endpoint_id" TEXT NOT NULL,
    "attempt" INTEGER NOT NULL,
    "attempted_at" TIMESTAMPTZ(3) NOT NULL,
    "status" INTEGER,
    "error" TEXT,
    "duration_ms" INTEGER NOT NULL,
    "response_excerpt" TEXT NOT NULL,

    CONSTRAINT "webhook_attempts_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "webhook_attempts_endpoint_idx" ON "webhook_attempts"("endpoint_id", "id" DESC);

ALTER TABLE "webhook_attempts" ADD CONSTRAINT "webhook_attempts_event_id_fkey"
    FOREIGN KEY ("event_id") REFERENCES "webhook_events"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The webhook worker's metrics read the backlog at every scrape (src/worker/sql/backlog.sql.ts):
-- how many events wait, how many are due, and how long the oldest due one has waited. Delivered
-- events stay in webhook_events, so without this index each scrape would read every event ever
-- sent; with it, only the pending ones. Partial, which Prisma cannot state: declared here only.
CREATE INDEX "webhook_events_pending_due_idx" ON "webhook_events" ("next_attempt_at")
    WHERE "state" = 'pending';

-- The lists' filters (docs/api.md, "Filters"): an order index that also holds every filtered
-- column, so that a filtered page's ids and its exact total (a count of the matching rows: the
-- per-day counts know nothing of the filters) come from the index alone, never from table rows.
-- A `minIntentScore` bounds the range read, since the index starts with the score.
--
-- A second index rather than wider columns in the first: the unfiltered lists keep reading the
-- narrower one (the planner takes the smaller of two indexes of the same order), so their deep
-- pages cost what they did; the price is one more index to write on import.
CREATE INDEX "companies_workspace_filters_idx" ON "companies"("workspace_id", "intent_score" DESC, "id")
  INCLUDE ("last_seen", "intent_level", "crm_status", "country");
CREATE INDEX "leads_workspace_filters_idx" ON "leads"("workspace_id", "intent_score" DESC, "id")
  INCLUDE ("created_at", "intent_level", "status", "assigned_to_id");

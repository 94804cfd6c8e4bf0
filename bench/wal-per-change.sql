-- WAL written per changed item, change tracking on and off (bench/wal-per-change.sh runs it on a
-- server of its own, so that no other session's WAL is counted). For each mode, in a workspace
-- of its own: N companies inserted in one statement and 3 contacts each in another (as an
-- import writes them), then N companies updated in one statement twice (the first right after a
-- checkpoint, paying a full-page image for each page it touches first; the second not), then
-- 1,000 single-company updates, each its own transaction (a pipeline writing as events arrive).
-- Off: the *_changes_* triggers disabled; the list-total and bound triggers stay.
\set ON_ERROR_STOP 1
\set n 10000
\pset footer off

CREATE TEMP TABLE result (mode text, step text, items int, wal_bytes numeric, ms numeric);

CREATE FUNCTION pg_temp.tracking(enabled boolean) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  trigger record;
BEGIN
  FOR trigger IN SELECT tgrelid::regclass AS tab, tgname FROM pg_trigger
    WHERE tgname LIKE '%\_changes\_%' AND NOT tgisinternal LOOP
    EXECUTE format('ALTER TABLE %s %s TRIGGER %I', trigger.tab,
      CASE WHEN enabled THEN 'ENABLE' ELSE 'DISABLE' END, trigger.tgname);
  END LOOP;
END $$;

\set mode on
\ir wal-per-change-steps.sql
\set mode off
\ir wal-per-change-steps.sql
SELECT pg_temp.tracking(true) \gset

SELECT mode, step, items, wal_bytes, round(wal_bytes / items) AS bytes_per_item, ms
FROM result ORDER BY step, mode DESC;

SELECT a.step, round(a.wal_bytes / b.wal_bytes, 2) AS wal_on_over_off,
  round(a.ms / b.ms, 2) AS time_on_over_off
FROM result a JOIN result b ON a.step = b.step AND a.mode = 'on' AND b.mode = 'off'
ORDER BY a.step;

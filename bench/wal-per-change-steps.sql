-- One mode's steps of wal-per-change.sql (:mode is on or off).
SELECT pg_temp.tracking(:'mode' = 'on') \gset
INSERT INTO workspaces (id, name, plan, updated_at) VALUES ('ws_' || :'mode', :'mode', 'growth', now());

CHECKPOINT;
SELECT pg_current_wal_lsn() AS lsn, clock_timestamp() AS t \gset
INSERT INTO companies (id, workspace_id, name, domain, industry, size, country, city, revenue,
  intent_score, intent_level, icp_score, commercial_score, crm_status, visits_count, first_seen,
  last_seen)
SELECT :'mode' || '_co_' || i, 'ws_' || :'mode', 'Company ' || i, 'company-' || i || '.example',
  'Software', '51-200', 'France', 'Lyon', '10M-50M', (i % 900) / 10.0, 'warm', 60, 55, 'new', 3,
  '2026-02-01T08:00:00Z', '2026-02-01T08:00:00Z'::timestamptz + i * interval '1 minute'
FROM generate_series(1, :n) i;
INSERT INTO result SELECT :'mode', '1a insert companies', :n,
  pg_wal_lsn_diff(pg_current_wal_lsn(), :'lsn'),
  round(extract(epoch FROM clock_timestamp() - :'t') * 1000);
SELECT pg_current_wal_lsn() AS lsn, clock_timestamp() AS t \gset
INSERT INTO contacts (id, workspace_id, company_id, name, job_title, email, seniority)
SELECT :'mode' || '_ct_' || i || '_' || j, 'ws_' || :'mode', :'mode' || '_co_' || i,
  'Contact ' || j, 'Head of Sales', 'c' || j || '@company-' || i || '.example', 'manager'
FROM generate_series(1, :n) i, generate_series(1, 3) j;
INSERT INTO result SELECT :'mode', '1b insert contacts (3 a company)', :n,
  pg_wal_lsn_diff(pg_current_wal_lsn(), :'lsn'),
  round(extract(epoch FROM clock_timestamp() - :'t') * 1000);

CHECKPOINT;
SELECT pg_current_wal_lsn() AS lsn, clock_timestamp() AS t \gset
UPDATE companies SET intent_score = intent_score + 0.1 WHERE workspace_id = 'ws_' || :'mode';
INSERT INTO result SELECT :'mode', '2 update, after a checkpoint', :n,
  pg_wal_lsn_diff(pg_current_wal_lsn(), :'lsn'),
  round(extract(epoch FROM clock_timestamp() - :'t') * 1000);

SELECT pg_current_wal_lsn() AS lsn, clock_timestamp() AS t \gset
UPDATE companies SET intent_score = intent_score + 0.1 WHERE workspace_id = 'ws_' || :'mode';
INSERT INTO result SELECT :'mode', '3 update, again', :n,
  pg_wal_lsn_diff(pg_current_wal_lsn(), :'lsn'),
  round(extract(epoch FROM clock_timestamp() - :'t') * 1000);

SELECT pg_current_wal_lsn() AS lsn, clock_timestamp() AS t \gset
SELECT format('UPDATE companies SET intent_score = intent_score + 0.1 WHERE workspace_id = %L AND id = %L',
  'ws_' || :'mode', :'mode' || '_co_' || (i * 7 % :n + 1))
FROM generate_series(1, 1000) i \gexec
INSERT INTO result SELECT :'mode', '4 single-company updates, one transaction each', 1000,
  pg_wal_lsn_diff(pg_current_wal_lsn(), :'lsn'),
  round(extract(epoch FROM clock_timestamp() - :'t') * 1000);

#!/bin/sh
# For docker-compose.pgbouncer.yml: the role the API instances use through PgBouncer, its password
# from API_ROLE_PASSWORD (the postgres image runs this once, when it creates its database:
# docker-entrypoint-initdb.d). A shell script, not SQL, so that the password is no literal here.
# The session settings the service relies on are the role's: PgBouncer in transaction mode
# refuses them as startup parameters, and a SET would not follow the client from one server
# connection to the next (docs/scaling.md, PgBouncer). The migrations run as postgres, on a
# direct connection, without the 5 s statement_timeout.
set -eu
psql -v ON_ERROR_STOP=1 -v password="${API_ROLE_PASSWORD:?set API_ROLE_PASSWORD}" \
  --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" <<'SQL'
CREATE ROLE api LOGIN PASSWORD :'password';
ALTER ROLE api SET TimeZone = 'UTC';
ALTER ROLE api SET extra_float_digits = 1;
ALTER ROLE api SET jit = off;
ALTER ROLE api SET statement_timeout = 5000;
GRANT USAGE ON SCHEMA public TO api;
-- The tables are created later, by the migrations (as postgres): reads and writes (the admin tool,
-- lastUsedAt, the triggers' change tables), no DDL.
ALTER DEFAULT PRIVILEGES FOR ROLE postgres IN SCHEMA public
  GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON TABLES TO api;
ALTER DEFAULT PRIVILEGES FOR ROLE postgres IN SCHEMA public GRANT USAGE ON SEQUENCES TO api;
SQL

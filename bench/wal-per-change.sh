#!/usr/bin/env bash
# WAL bytes and time per changed item with change tracking on and off (docs/scaling.md), on a
# PostgreSQL 15 server of its own (initdb under /tmp, a free port): the WAL position is the whole
# server's, so no other session may write while it is measured. Needs `npm run build` (migrations)
# and the system's PostgreSQL 15 binaries. Prints the date, the machine and the tables.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=/usr/lib/postgresql/15/bin
ROOT="$(mktemp -d /tmp/wal-per-change-XXXXXX)"
PORT="$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")"
AS=()
if [ "$(id -u)" = 0 ]; then chown postgres "$ROOT"; AS=(runuser -u postgres --); fi
"${AS[@]}" "$BIN/initdb" -D "$ROOT/data" -U postgres --auth trust -E UTF8 --locale C >/dev/null
# The server's defaults but the port: WAL volume depends on wal_level (replica, the default, is
# what streaming replication needs) and full_page_writes (on).
printf "port = %s\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = ''\n" "$PORT" >>"$ROOT/data/postgresql.conf"
"${AS[@]}" "$BIN/pg_ctl" -D "$ROOT/data" -l "$ROOT/log" -w start >/dev/null
trap '"${AS[@]}" "$BIN/pg_ctl" -D "$ROOT/data" -m immediate stop >/dev/null; rm -rf "$ROOT"' EXIT
URL="postgresql://postgres@127.0.0.1:$PORT/postgres"
DATABASE_URL="$URL" node dist/database/migrate.js >/dev/null

echo "Run of $(date -u +%Y-%m-%dT%H:%M:%SZ): $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(free -g | awk '/Mem:/{print $2}') GiB; $("$BIN/postgres" --version); load average $(cut -d' ' -f1-3 /proc/loadavg)"
psql "$URL" -q -f bench/wal-per-change.sql

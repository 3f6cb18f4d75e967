#!/usr/bin/env bash
# Proves a backup can be restored: pg_dump the registry's database, pg_restore it into a fresh database,
# and compare every table's row count and content checksum between the two.
#
#   scripts/backup-restore-check.sh [SOURCE_URL]        (default: $DATABASE_URL)
#
# The fresh database is created on the same server (it needs CREATEDB) and dropped afterwards unless
# KEEP_RESTORED=1. The dump is kept when DUMP_FILE names where to write it. pg_dump, pg_restore and psql
# must be at least the server's major version. Exit status 0 only when every table matches.
set -euo pipefail

SOURCE_URL=${1:-${DATABASE_URL:-}}
if [[ -z "$SOURCE_URL" ]]; then
  echo "usage: $0 postgres://user@host:5432/database   (or set DATABASE_URL)" >&2
  exit 2
fi
for tool in pg_dump pg_restore psql; do
  command -v "$tool" >/dev/null || { echo "$tool not found (install the PostgreSQL client tools)" >&2; exit 2; }
done

# postgres://user:pass@host:port/db?params -> the same URL naming another database
base=${SOURCE_URL%%\?*}
params=${SOURCE_URL#"$base"}
RESTORE_DB=${RESTORE_DB:-skillreg_restore_check_$(date +%s)_$$}
TARGET_URL="${base%/*}/${RESTORE_DB}${params}"
DUMP=${DUMP_FILE:-$(mktemp "${TMPDIR:-/tmp}/skillreg-backup.XXXXXX")}

cleanup() {
  if [[ "${KEEP_RESTORED:-0}" != 1 ]]; then
    psql "$SOURCE_URL" -qAt -v ON_ERROR_STOP=1 -c "drop database if exists \"$RESTORE_DB\"" >/dev/null 2>&1 || true
  fi
  if [[ -z "${DUMP_FILE:-}" ]]; then rm -f "$DUMP"; fi
}
trap cleanup EXIT

now_us() { echo "${EPOCHREALTIME/[.,]/}"; }  # bash 5; microseconds
elapsed_ms() { echo $((($(now_us) - $1) / 1000)); }
redact() { sed -E 's#(://[^:/@]+):[^@]*@#\1:***@#'; }

echo "source:   $(redact <<<"$SOURCE_URL")"
echo "== pg_dump (custom format)"
start=$(now_us)
pg_dump --format=custom --no-owner --no-privileges --file="$DUMP" "$SOURCE_URL"
echo "dump:     $DUMP ($(wc -c <"$DUMP" | tr -d ' ') bytes) in $(elapsed_ms "$start") ms"

echo "== pg_restore into a fresh database"
psql "$SOURCE_URL" -qAt -v ON_ERROR_STOP=1 -c "create database \"$RESTORE_DB\"" >/dev/null
start=$(now_us)
pg_restore --no-owner --no-privileges --exit-on-error --dbname="$TARGET_URL" "$DUMP"
echo "restored: $(redact <<<"$TARGET_URL") in $(elapsed_ms "$start") ms"

tables_sql="select quote_ident(table_schema) || '.' || quote_ident(table_name) from information_schema.tables
  where table_type = 'BASE TABLE' and table_schema not in ('pg_catalog', 'information_schema') order by 1"
# Row count and an order-independent checksum of the rows' text form.
stats_sql() {
  echo "select count(*) || ' ' || md5(coalesce(string_agg(h, '' order by h), '')) from (select md5(t::text) as h from $1 t) rows"
}

source_tables=$(psql "$SOURCE_URL" -qAt -v ON_ERROR_STOP=1 -c "$tables_sql")
target_tables=$(psql "$TARGET_URL" -qAt -v ON_ERROR_STOP=1 -c "$tables_sql")
if [[ "$source_tables" != "$target_tables" ]]; then
  echo "FAIL: the restored database has different tables" >&2
  diff <(echo "$source_tables") <(echo "$target_tables") >&2 || true
  exit 1
fi

echo "== compare"
printf '%-40s %10s %10s  %s\n' table source restored checksum
failures=0
while read -r table; do
  [[ -z "$table" ]] && continue
  read -r source_count source_sum <<<"$(psql "$SOURCE_URL" -qAt -v ON_ERROR_STOP=1 -c "$(stats_sql "$table")")"
  read -r target_count target_sum <<<"$(psql "$TARGET_URL" -qAt -v ON_ERROR_STOP=1 -c "$(stats_sql "$table")")"
  verdict=same
  if [[ "$source_count" != "$target_count" || "$source_sum" != "$target_sum" ]]; then
    verdict=DIFFERENT
    failures=$((failures + 1))
  fi
  printf '%-40s %10s %10s  %s\n' "$table" "$source_count" "$target_count" "$verdict"
done <<<"$source_tables"

extensions=$(psql "$TARGET_URL" -qAt -c "select string_agg(extname, ', ' order by extname) from pg_extension")
echo "extensions in the restored database: $extensions"
if ((failures > 0)); then
  echo "FAIL: $failures table(s) differ" >&2
  exit 1
fi
echo "OK: every table restored with the same rows"

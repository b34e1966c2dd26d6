#!/usr/bin/env bash
# mpin-server backup and restore, on SQLite and on PostgreSQL (a throwaway cluster from
# postgres.sh: 127.0.0.1 only, stopped and deleted at exit), with logins through pam_mpin.so
# (pamtester and libpam-wrapper, nothing in /etc changes). A user registers; a backup is taken
# while the server serves and logins run; the data directory (and the PostgreSQL schema) is
# wiped; the restore brings it back and the user's old token logs in again: the same
# master-secret shares and keys, and the database. Also: a tampered backup, a file added to
# one, a restore over existing state without --force, with --force (the old state kept
# aside), a restore while the server serves, and while another session uses the database.
# README recipe covered here: "Back up and restore the server".
# Needs the release builds of pam_mpin, mpin-pam-helper, mpinctl and mpin-server (make test-backup).
# MPIN_SKIP_POSTGRES=1 runs the SQLite part alone (said as a skip).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/Tests/Integration/lib.sh"
. "$ROOT/Tests/Integration/postgres.sh"
trap 'pg_stop; cleanup' EXIT

NSS_USERS="${NSS_USERS:-} bob"
pam_setup


# logins_in_background SERVICE USER PIN N: N logins one after the other, in the background;
# each status on a line of $WORK/logins.out. Sets LOGINS_PID.
logins_in_background() {
  local service=$1 user=$2 pin=$3 n=$4
  : > "$WORK/logins.out"
  ( for _ in $(seq 1 "$n"); do
      printf '%s\n' "$pin" | LD_PRELOAD=libpam_wrapper.so PAM_WRAPPER=1 PAM_WRAPPER_SERVICE_DIR="$SERVICES" \
        timeout 30 pamtester "$service" "$user" authenticate >/dev/null 2>&1
      echo $? >> "$WORK/logins.out"
    done ) &
  LOGINS_PID=$!
  PIDS+=("$LOGINS_PID")
}

# mode_of PATH: octal permission bits.
mode_of() { stat -c %a "$1"; }

# tree_sum DIR: one checksum of every file's name, mode and contents under DIR.
tree_sum() { (cd "$1" && find . -type f -printf '%p %m\n' | sort && find . -type f -exec sha256sum {} + | sort) | sha256sum; }

SERVER=("$BIN/mpin-server")

# --- SQLite ------------------------------------------------------------------------------------

start_server || exit 1
write_config "$WORK/mpin.conf" "$BACKEND"
ORIGINAL_VERDICT_KEY=$VERDICT_KEY
service mpin "auth required $MODULE config=$WORK/mpin.conf" "account required pam_permit.so"

echo 1234 | ctl register alice --identity alice@example.org --pin-stdin >/dev/null
check "mpinctl registers alice" [ "$?" -eq 0 ]
pamt mpin alice 1234
check "alice logs in before the backup" [ "$RC" -eq 0 ]

SHARE1=$(cat "$WORK/server/dta1.share")
logins_in_background mpin alice 1234 8
sleep 0.3
"${SERVER[@]}" backup --data "$WORK/server" "$WORK/backup" >"$WORK/backup.out" 2>&1
check "backup succeeds while the server serves and logins run" [ "$?" -eq 0 ]
wait "$LOGINS_PID"
check_all "the logins during the backup all succeeded" \
  '[ "$(wc -l < "$WORK/logins.out")" -eq 8 ] && ! grep -qv "^0$" "$WORK/logins.out"'
check "backup says what it copied" grep -q "^backed up $WORK/server to $WORK/backup: .* database sqlite schema version" "$WORK/backup.out"
check "backup prints no master-secret share" bash -c '! grep -qF "$1" "$2"' _ "$SHARE1" "$WORK/backup.out"
check "the backup directory is 0700" [ "$(mode_of "$WORK/backup")" = 700 ]
check_all "every file of the backup is 0600" '[ -z "$(find "$WORK/backup" -type f ! -perm 600)" ]'
check_all "the backup holds both shares, the keys, the config, the database and a manifest" \
  'for f in dta1.share dta2.share app.key verdict.key config.json mpin.sqlite manifest.json; do [ -f "$WORK/backup/$f" ] || exit 1; done'
check_all "the backup's database is one file (no -wal or -shm)" '[ ! -e "$WORK/backup/mpin.sqlite-wal" ] && [ ! -e "$WORK/backup/mpin.sqlite-shm" ]'
check "the manifest lists every file with its SHA-256" python3 - "$WORK/backup" <<'PY'
import hashlib, json, os, sys
d = sys.argv[1]
m = json.load(open(os.path.join(d, "manifest.json")))
names = {f["name"] for f in m["files"]}
assert names == set(os.listdir(d)) - {"manifest.json"}, names
for f in m["files"]:
    assert hashlib.sha256(open(os.path.join(d, f["name"]), "rb").read()).hexdigest() == f["sha256"], f["name"]
assert m["database"]["kind"] == "sqlite" and m["database"]["schemaVersion"] >= 1
PY

mkdir -p "$WORK/nonempty" && : > "$WORK/nonempty/x"
"${SERVER[@]}" backup --data "$WORK/server" "$WORK/nonempty" >"$WORK/out" 2>&1; RC=$?
check_all "backup refuses a directory that is not empty" '[ $RC -ne 0 ] && grep -q "is not empty" "$WORK/out"'
mkdir -p "$WORK/elsewhere" && ln -s "$WORK/elsewhere" "$WORK/link"
"${SERVER[@]}" backup --data "$WORK/server" "$WORK/link" >"$WORK/out" 2>&1; RC=$?
check_all "backup refuses a symbolic link as its directory, writing nothing through it" \
  '[ $RC -ne 0 ] && [ -z "$(ls -A "$WORK/elsewhere")" ]'

# A restore while the server serves the directory.
"${SERVER[@]}" restore --data "$WORK/server" --force "$WORK/backup" >"$WORK/out" 2>&1; RC=$?
check_all "restore refuses while a server serves the data directory, and says how to stop it" \
  '[ $RC -ne 0 ] && grep -q "a server is serving this data directory: stop it first" "$WORK/out"'
stop_server

# A restore over existing state without --force changes nothing.
BEFORE=$(tree_sum "$WORK/server")
"${SERVER[@]}" restore --data "$WORK/server" "$WORK/backup" >"$WORK/out" 2>&1; RC=$?
check_all "restore over existing state without --force is refused" '[ $RC -ne 0 ] && grep -q -- "--force" "$WORK/out"'
check "the refused restore left the data directory as it was" [ "$(tree_sum "$WORK/server")" = "$BEFORE" ]

# Tampered backups are refused before anything is touched.
cp -a "$WORK/backup" "$WORK/tampered"
python3 - "$WORK/tampered/dta1.share" <<'PY'
import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
b[0] = ord("0") if b[0] != ord("0") else ord("1")
open(p, "wb").write(b)
PY
"${SERVER[@]}" restore --data "$WORK/fresh" "$WORK/tampered" >"$WORK/out" 2>&1; RC=$?
check_all "a backup with an altered share is refused (checksum)" \
  '[ $RC -ne 0 ] && grep -q "dta1.share does not match the manifest" "$WORK/out"'
check "the refused restore made no data directory" [ ! -e "$WORK/fresh" ]
check "the refusal prints no share" bash -c '! grep -qF "$1" "$2"' _ "$SHARE1" "$WORK/out"
cp -a "$WORK/backup" "$WORK/extra" && echo x > "$WORK/extra/planted.key"
"${SERVER[@]}" restore --data "$WORK/fresh2" "$WORK/extra" >"$WORK/out" 2>&1; RC=$?
check_all "a backup with a file its manifest does not list is refused" '[ $RC -ne 0 ] && grep -q "planted.key is not in the backup" "$WORK/out"'

# Wipe the data directory, restore, serve again: alice's old token logs in.
rm -rf "$WORK/server"
"${SERVER[@]}" restore --data "$WORK/server" "$WORK/backup" >"$WORK/restore.out" 2>&1
check "restore into a wiped data directory succeeds" [ "$?" -eq 0 ]
check_all "the restored directory is 0700 and its files 0600" \
  '[ "$(mode_of "$WORK/server")" = 700 ] && [ -z "$(find "$WORK/server" -type f ! -perm 600)" ]'
check "the restored shares are the original ones" [ "$(cat "$WORK/server/dta1.share")" = "$SHARE1" ]
restart_server || exit 1
check "the restored server signs with the original verdict key" [ "$VERDICT_KEY" = "$ORIGINAL_VERDICT_KEY" ]
pamt mpin alice 1234
check "after restore, alice's old token logs in (the same master-secret shares and database)" [ "$RC" -eq 0 ]
pamt mpin alice 1235
check "after restore, a wrong PIN still fails" [ "$RC" -ne 0 ]
pamt mpin alice 1234
check "after restore, the right PIN again succeeds" [ "$RC" -eq 0 ]
stop_server

# Run as root into a directory of another user's (the package's /var/lib/mpin-server belongs to
# mpin-server): the restored directory and files are that user's.
if [ "$(id -u)" = 0 ] && getent passwd nobody >/dev/null; then
  mkdir -m 700 "$WORK/owned" && chown nobody: "$WORK/owned"
  "${SERVER[@]}" restore --data "$WORK/owned/data" "$WORK/backup" >"$WORK/out" 2>&1; RC=$?
  check_all "restore as root gives the new data directory and its files to the parent directory's owner" \
    '[ $RC -eq 0 ] && [ "$(stat -c %U "$WORK/owned/data")" = nobody ] && [ -z "$(find "$WORK/owned/data" ! -user nobody)" ]'
fi

# --force keeps the state it replaces.
"${SERVER[@]}" user add bob@example.org --data "$WORK/server" >/dev/null
REPLACED=$(sha256sum < "$WORK/server/mpin.sqlite")
"${SERVER[@]}" restore --data "$WORK/server" --force "$WORK/backup" >"$WORK/out" 2>&1
check "restore --force over existing state succeeds" [ "$?" -eq 0 ]
ASIDE=$(sed -n 's/^the previous state is kept in //p' "$WORK/out")
check_all "restore --force says where the previous state is, and keeps it there" \
  '[ -n "$ASIDE" ] && [ -f "$ASIDE/dta1.share" ] && [ -f "$ASIDE/config.json" ] && [ "$(sha256sum < "$ASIDE/mpin.sqlite")" = "$REPLACED" ]'
check "the replaced state's directory is 0700" [ "$(mode_of "$ASIDE")" = 700 ]
check_all "after restore --force the user added since the backup is gone" \
  '! "$BIN/mpin-server" user list --data "$WORK/server" | grep -q "^bob@example.org"'
restart_server || exit 1
pamt mpin alice 1234
check "after restore --force, alice logs in" [ "$RC" -eq 0 ]
stop_server
check "restore --force says how to put the kept state back" grep -q "^to put it back: mpin-server restore --data $WORK/server --force $ASIDE" "$WORK/out"
"${SERVER[@]}" restore --data "$WORK/server" --force "$ASIDE" >"$WORK/out" 2>&1; RC=$?
check_all "restore --force of the kept state puts it back (bob, added after the backup, is there again)" \
  '[ $RC -eq 0 ] && [ -f "$ASIDE/manifest.json" ] && "$BIN/mpin-server" user list --data "$WORK/server" | grep -q "^bob@example.org"'

# A server started while a restore holds the directory (flock(1) stands in for it) refuses to start.
hold_lock "$WORK/server"
PIDS+=("$LOCK_PID")
timeout 30 "${SERVER[@]}" serve --data "$WORK/server" --host 127.0.0.1 --port "$PORT" >"$WORK/out" 2>&1; RC=$?
check_all "serve refuses to start while a restore runs on the data directory" \
  '[ $RC -ne 0 ] && [ $RC -ne 124 ] && grep -q "a restore is running on this data directory" "$WORK/out"'
kill "$LOCK_PID" 2>/dev/null; wait "$LOCK_PID" 2>/dev/null

# --- PostgreSQL --------------------------------------------------------------------------------

if [ -n "${MPIN_SKIP_POSTGRES:-}" ]; then
  echo "ok - # SKIP PostgreSQL part (MPIN_SKIP_POSTGRES)"
  summary; exit $?
fi
pg_start || { fail "a throwaway PostgreSQL cluster starts"; summary; exit 1; }
PSQL=("$(pg_bindir)/psql" -h 127.0.0.1 -p "$PG_PORT" -U postgres -d mpin -qAt)

PGDATA_DIR="$WORK/pg-server"
"${SERVER[@]}" init --data "$PGDATA_DIR" --auto-activate --database "$MPIN_TEST_POSTGRES" >/dev/null
check "mpin-server init on PostgreSQL" [ "$?" -eq 0 ]
PGPORT_HTTP=$(free_port)
serve_pg() {
  : > "$WORK/pg-server.log"
  "${SERVER[@]}" serve --data "$PGDATA_DIR" --host 127.0.0.1 --port "$PGPORT_HTTP" >>"$WORK/pg-server.log" 2>&1 &
  PG_SERVER_PID=$!
  PIDS+=("$PG_SERVER_PID")
  wait_ready "$WORK/pg-server.log" "mpin-server (PostgreSQL)"
}
stop_pg_server() { SERVER_PID=$PG_SERVER_PID stop_server; }
serve_pg || exit 1
VERDICT_KEY=$("${SERVER[@]}" verdict-key --data "$PGDATA_DIR")
PG_VERDICT_KEY=$VERDICT_KEY
write_config "$WORK/mpin-pg.conf" "http://127.0.0.1:$PGPORT_HTTP"
service mpin-pg "auth required $MODULE config=$WORK/mpin-pg.conf" "account required pam_permit.so"
echo 2468 | LD_PRELOAD="${NSS_SO:-}" "$BIN/mpinctl" --config "$WORK/mpin-pg.conf" register dora --identity dora@example.org --pin-stdin >/dev/null
check "mpinctl registers dora against the PostgreSQL server" [ "$?" -eq 0 ]
pamt mpin-pg dora 2468
check "dora logs in (PostgreSQL)" [ "$RC" -eq 0 ]

logins_in_background mpin-pg dora 2468 8
sleep 0.3
"${SERVER[@]}" backup --data "$PGDATA_DIR" "$WORK/pg-backup" >"$WORK/pg-backup.out" 2>&1
check "backup on PostgreSQL succeeds while the server serves and logins run" [ "$?" -eq 0 ]
wait "$LOGINS_PID"
check_all "the logins during the PostgreSQL backup all succeeded" \
  '[ "$(wc -l < "$WORK/logins.out")" -eq 8 ] && ! grep -qv "^0$" "$WORK/logins.out"'
check "backup names the database and its rows" grep -q "database postgresql://postgres@127.0.0.1:$PG_PORT/mpin schema version .* rows in .* tables" "$WORK/pg-backup.out"
check_all "the PostgreSQL backup holds the shares, the keys and the rows of users and identities" \
  '[ -f "$WORK/pg-backup/dta1.share" ] && [ -f "$WORK/pg-backup/dta2.share" ] && grep -q "dora@example.org" "$WORK/pg-backup/postgresql-users.jsonl" && [ -s "$WORK/pg-backup/postgresql-identities.jsonl" ]'
check_all "every file of the PostgreSQL backup is 0600, its directory 0700" \
  '[ "$(mode_of "$WORK/pg-backup")" = 700 ] && [ -z "$(find "$WORK/pg-backup" -type f ! -perm 600)" ]'
stop_pg_server

# The database still holds rows: refused without --force, even with the directory gone.
mv "$PGDATA_DIR" "$WORK/pg-server.old"
"${SERVER[@]}" restore --data "$PGDATA_DIR" "$WORK/pg-backup" >"$WORK/out" 2>&1; RC=$?
check_all "restore into a database that holds rows is refused without --force" '[ $RC -ne 0 ] && grep -q "holds rows" "$WORK/out"'

# Another session on the database (a node not stopped) refuses the restore.
"${PSQL[@]}" -c 'SELECT pg_sleep(30)' >/dev/null 2>&1 &
PSQL_PID=$!
PIDS+=("$PSQL_PID")
for _ in $(seq 300); do
  [ "$("${PSQL[@]}" -tAc "SELECT count(*) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(30)'")" = 1 ] && break
  sleep 0.1
done
"${SERVER[@]}" restore --data "$PGDATA_DIR" --force "$WORK/pg-backup" >"$WORK/out" 2>&1; RC=$?
check_all "restore refuses while another session uses the database" '[ $RC -ne 0 ] && grep -q "other session(s) are connected" "$WORK/out"'
kill "$PSQL_PID" 2>/dev/null; wait "$PSQL_PID" 2>/dev/null
"${PSQL[@]}" -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'mpin' AND pid <> pg_backend_pid()" >/dev/null

# Wipe everything: the data directory and the schema itself.
rm -rf "$PGDATA_DIR" "$WORK/pg-server.old"
"${PSQL[@]}" -c 'DROP SCHEMA public CASCADE; CREATE SCHEMA public' >/dev/null 2>"$WORK/psql.err"
check "the schema is gone" [ "$("${PSQL[@]}" -c "SELECT to_regclass('users') IS NULL")" = t ]
"${SERVER[@]}" restore --data "$PGDATA_DIR" "$WORK/pg-backup" >"$WORK/pg-restore.out" 2>&1
check "restore into a wiped data directory and an empty database succeeds" [ "$?" -eq 0 ]
check "the restored database holds dora" [ "$("${PSQL[@]}" -c "SELECT count(*) FROM users WHERE user_id = 'dora@example.org'")" = 1 ]
serve_pg || exit 1
check "the restored PostgreSQL server signs with the original verdict key" \
  [ "$("${SERVER[@]}" verdict-key --data "$PGDATA_DIR")" = "$PG_VERDICT_KEY" ]
pamt mpin-pg dora 2468
check "after restore on PostgreSQL, dora's old token logs in" [ "$RC" -eq 0 ]
stop_pg_server

# --force on PostgreSQL: the rows it replaces are exported beside the files it replaces.
"${SERVER[@]}" user add erin@example.org --data "$PGDATA_DIR" >/dev/null 2>"$WORK/user-add.err"
"${SERVER[@]}" restore --data "$PGDATA_DIR" --force "$WORK/pg-backup" >"$WORK/out" 2>&1
check "restore --force on PostgreSQL succeeds" [ "$?" -eq 0 ]
ASIDE=$(sed -n 's/^the previous state is kept in //p' "$WORK/out")
check_all "restore --force keeps the replaced rows (erin, added after the backup) and files aside" \
  '[ -n "$ASIDE" ] && grep -q "erin@example.org" "$ASIDE/postgresql-users.jsonl" && [ -f "$ASIDE/dta1.share" ]'
check "after restore --force, erin is gone from the database" \
  [ "$("${PSQL[@]}" -c "SELECT count(*) FROM users WHERE user_id = 'erin@example.org'")" = 0 ]
serve_pg || exit 1
pamt mpin-pg dora 2468
check "after restore --force on PostgreSQL, dora logs in" [ "$RC" -eq 0 ]
stop_pg_server
"${SERVER[@]}" restore --data "$PGDATA_DIR" --force "$ASIDE" >"$WORK/out" 2>&1; RC=$?
check_all "restore --force of the kept PostgreSQL state puts it back (erin is there again)" \
  '[ $RC -eq 0 ] && [ "$("${PSQL[@]}" -c "SELECT count(*) FROM users WHERE user_id = '"'erin@example.org'"'")" = 1 ]'

summary

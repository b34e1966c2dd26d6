#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the tests and the bench:
#   bash Tests/Integration/postgres.sh run COMMAND [ARG...]
# installs PostgreSQL if missing (apt-get install postgresql), makes a cluster in a mktemp
# directory (initdb as the `postgres` user when run as root), listens on 127.0.0.1 only, on a
# free port picked here, with trust authentication (the cluster lives for one command and
# holds nothing but test data), creates the database `mpin`, runs COMMAND with
#   MPIN_TEST_POSTGRES=postgresql://postgres@127.0.0.1:PORT/mpin
# and always stops the cluster and deletes its directory afterwards (trap), whatever COMMAND
# did. Exits with COMMAND's status.
#
# Sourced, it defines pg_start (sets MPIN_TEST_POSTGRES, PG_PORT, PG_DIR) and pg_stop, for
# scripts that install their own trap.
# README recipe covered through this script: "Several nodes on PostgreSQL": `make
# test-postgres` runs MultiNodeTests (two mpin-server serve nodes on one database) and the
# *PostgresTests with it.
set -u

pg_bindir() {
  local d
  d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
  [ -n "$d" ] && [ -x "$d/initdb" ] && echo "$d"
}

pg_install() {
  pg_bindir >/dev/null && return 0
  echo "postgres.sh: installing postgresql" >&2
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends postgresql >&2
  pg_bindir >/dev/null
}

# pg_as CMD...: runs CMD as the cluster's owner: `postgres` when we are root (PostgreSQL refuses
# to run as root), else ourselves.
pg_as() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

pg_start() {
  pg_install || { echo "postgres.sh: PostgreSQL is not installed and could not be" >&2; return 1; }
  local bin
  bin=$(pg_bindir)
  PG_DIR=$(mktemp -d /tmp/mpin-pg.XXXXXX)
  chmod 700 "$PG_DIR"
  [ "$(id -u)" = 0 ] && chown postgres: "$PG_DIR"
  PG_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
  pg_as "$bin/initdb" -D "$PG_DIR/data" -U postgres -A trust -E UTF8 --locale=C --no-sync >"$PG_DIR/initdb.log" 2>&1 \
    || { cat "$PG_DIR/initdb.log" >&2; return 1; }
  # 127.0.0.1 only; the Unix socket in the cluster's own directory; room for two nodes' pools.
  pg_as "$bin/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w -t 30 \
    -o "-c listen_addresses=127.0.0.1 -p $PG_PORT -c unix_socket_directories=$PG_DIR -c max_connections=200 ${PG_SERVER_OPTIONS:-}" \
    start >/dev/null || { cat "$PG_DIR/server.log" >&2; return 1; }
  "$bin/psql" -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres -qAt -c 'CREATE DATABASE mpin' >/dev/null \
    || { cat "$PG_DIR/server.log" >&2; return 1; }
  export MPIN_TEST_POSTGRES="postgresql://postgres@127.0.0.1:$PG_PORT/mpin"
  echo "postgres.sh: PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$PG_PORT ($PG_DIR)" >&2
}

pg_stop() {
  [ -n "${PG_DIR:-}" ] || return 0
  if [ -f "$PG_DIR/data/postmaster.pid" ]; then
    pg_as "$(pg_bindir)/pg_ctl" -D "$PG_DIR/data" -m fast -w -t 30 stop >/dev/null 2>&1 \
      || pg_as "$(pg_bindir)/pg_ctl" -D "$PG_DIR/data" -m immediate stop >/dev/null 2>&1
  fi
  rm -rf "$PG_DIR"
  PG_DIR=""
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  if [ "${1:-}" != run ] || [ $# -lt 2 ]; then
    echo "usage: $0 run COMMAND [ARG...]" >&2
    exit 64
  fi
  shift
  trap pg_stop EXIT
  trap 'exit 130' INT TERM
  pg_start || exit 1
  "$@"
  exit $?
fi

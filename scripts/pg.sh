#!/usr/bin/env bash
# pg.sh start|stop|url|status — a throwaway PostgreSQL cluster for `make run` and
# `make test` (docs/DESIGN.md §12), built from the machine's PostgreSQL binaries.
#
# The cluster lives under .state/pg (ignored by git). initdb and postgres refuse to run as
# root, so as root the server runs as the `postgres` user; when that user cannot reach the
# repository folder (a clone under /root, say) the data goes to a private folder under /tmp
# whose path is remembered in .state/pgdir. It listens on 127.0.0.1:$PGPORT only
# (default 54329) and trusts local connections: it is a development cluster.
#
# The port a cluster was started on is remembered in .state/pgport: later calls without
# PGPORT (make healthcheck, make migrate, url) reach that cluster, not another one on the
# default port; a call with another PGPORT while it runs is told so and uses the running one.
# PG_STATE_DIR moves .state (tests).
#
# stop and destroy refuse while a `make run` of this checkout holds .state/run.lock (its
# flock, scripts/run.sh): stopping the database under it leaves every REST call failing.
# run.sh's own shutdown sets PG_STOP_FROM_RUN=1 (it holds the lock then); FORCE=1 overrides.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
state="${PG_STATE_DIR:-$here/.state}"
remembered=""
[ -f "$state/pgport" ] && remembered=$(cat "$state/pgport")
port="${PGPORT:-${remembered:-54329}}"
db="${PGDATABASE_NAME:-agentpack}"

bindir() {
  local d
  for d in /usr/lib/postgresql/*/bin; do
    [ -x "$d/initdb" ] && { echo "$d"; return; }
  done
  command -v initdb >/dev/null && { dirname "$(command -v initdb)"; return; }
  echo "pg.sh: no PostgreSQL binaries found (install postgresql)" >&2
  exit 1
}
BIN=$(bindir)

as_pg() {
  # cd /: the postgres user may not be allowed into the caller's folder.
  if [ "$(id -u)" = 0 ]; then (cd / && runuser -u postgres -- "$@"); else "$@"; fi
}

datadir() {
  if [ -f "$state/pgdir" ]; then cat "$state/pgdir"; return; fi
  mkdir -p "$state"
  local d="$state/pg"
  if [ "$(id -u)" = 0 ] && ! runuser -u postgres -- test -x "$state" 2>/dev/null; then
    d=$(mktemp -d /tmp/agentpack-pg.XXXXXX)
  fi
  echo "$d" > "$state/pgdir"
  echo "$d"
}

url() { echo "postgres://postgres@127.0.0.1:$port/$db?sslmode=disable"; }

start() {
  local d; d=$(datadir)
  mkdir -p "$d"
  [ "$(id -u)" = 0 ] && chown postgres: "$d" && chmod 700 "$d"
  if [ ! -f "$d/data/PG_VERSION" ]; then
    as_pg "$BIN/initdb" -D "$d/data" -U postgres --auth=trust -E UTF8 --no-sync >/dev/null
  fi
  if as_pg "$BIN/pg_ctl" -D "$d/data" status >/dev/null 2>&1; then
    if [ -n "$remembered" ] && [ "$remembered" != "$port" ]; then
      echo "pg.sh: the cluster already runs on 127.0.0.1:$remembered (not PGPORT=$port); using it" >&2
      port=$remembered
    fi
    echo "pg.sh: already running on 127.0.0.1:$port" >&2
  else
    echo "$port" > "$state/pgport"
    as_pg "$BIN/pg_ctl" -D "$d/data" -l "$d/server.log" -w -t 30 start \
      -o "-h 127.0.0.1 -p $port -c unix_socket_directories='' -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" >/dev/null \
      || { cat "$d/server.log" >&2; exit 1; }
  fi
  if ! as_pg "$BIN/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -Atqc \
      "SELECT 1 FROM pg_database WHERE datname='$db'" | grep -q 1; then
    as_pg "$BIN/createdb" -h 127.0.0.1 -p "$port" -U postgres "$db"
  fi
}

# in_use_by_run fails (status 1) when a make run of this checkout holds the run lock,
# after saying so on stderr, unless PG_STOP_FROM_RUN=1 or FORCE=1.
in_use_by_run() {
  [ "${PG_STOP_FROM_RUN:-}" = 1 ] || [ "${FORCE:-}" = 1 ] && return 0
  [ -f "$state/run.lock" ] || return 0
  command -v flock >/dev/null || return 0
  if flock -n "$state/run.lock" true 2>/dev/null; then return 0; fi
  local holder; holder=$(head -c 32 "$state/run.lock" | tr -cd '0-9')
  echo "pg.sh: make run${holder:+ (pid $holder)} is using the local Postgres: stop it first (Ctrl-C in its terminal${holder:+, or kill $holder}); it stops the database itself if it started it. FORCE=1 $1 anyway." >&2
  return 1
}

# stop says on stderr what it did: stopped (and where the data stays), or nothing to stop.
stop() {
  if [ ! -f "$state/pgdir" ]; then echo "pg.sh: no local cluster (nothing to stop)" >&2; return 0; fi
  local d; d=$(cat "$state/pgdir")
  if [ ! -f "$d/data/PG_VERSION" ]; then echo "pg.sh: no local cluster in $d (nothing to stop)" >&2; return 0; fi
  if ! as_pg "$BIN/pg_ctl" -D "$d/data" status >/dev/null 2>&1; then
    echo "pg.sh: the local cluster ($d) is not running (nothing to stop)" >&2
    return 0
  fi
  as_pg "$BIN/pg_ctl" -D "$d/data" -m fast -w stop >/dev/null 2>&1 || true
  echo "pg.sh: stopped the local cluster on 127.0.0.1:$port (data kept in $d; make db-destroy deletes it)" >&2
}

case "${1:-}" in
  start) start; url ;;
  stop) in_use_by_run "make db-stop" || exit 1; stop ;;
  url) url ;;
  status) [ -f "$state/pgdir" ] || exit 3; d=$(cat "$state/pgdir"); as_pg "$BIN/pg_ctl" -D "$d/data" status ;;
  destroy) in_use_by_run "make db-destroy" || exit 1; stop 2>/dev/null; rm -f "$state/pgport"; [ -f "$state/pgdir" ] && rm -rf "$(cat "$state/pgdir")" "$state/pgdir" ;;
  *) echo "usage: $0 start|stop|url|status|destroy" >&2; exit 2 ;;
esac

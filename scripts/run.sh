#!/usr/bin/env bash
# run.sh — `make run`: Postgres (DATABASE_URL or the local cluster in .state/pg, kept until make db-destroy), migrations,
# seed, then every function's handler and the demo upstream on one port until Ctrl-C.
# Each step prints a "make run:" line first (a cold first run compiles for minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
say() { printf 'make run: %s\n' "$*" >&2; }
# One make run per checkout: a second one would migrate, seed and repoint the demo
# connections of the running one's database (.state/pg). The lock is an flock on
# .state/run.lock (released when this script exits, even on kill -9); the file holds the
# holder's pid. PG_STATE_DIR moves .state, as in pg.sh.
state="${PG_STATE_DIR:-.state}"
mkdir -p "$state"
exec 9<>"$state/run.lock"
if ! flock -n 9; then
  holder=$(head -c 32 "$state/run.lock" | tr -cd '0-9')
  say "another make run${holder:+ (pid $holder)} is using this checkout's $state/pg: stop it (Ctrl-C in its terminal${holder:+, or kill $holder}) first"
  exit 1
fi
printf '%s\n' "$$" > "$state/run.lock"
started_pg=0
if [ -z "${DATABASE_URL:-}" ]; then
  scripts/pg.sh status >/dev/null 2>&1 && already=1 || already=0
  [ "$already" = 1 ] && say "using the running local Postgres" || say "starting the local Postgres cluster (.state/pg; kept until make db-destroy)"
  DATABASE_URL=$(scripts/pg.sh start)
  export DATABASE_URL
  [ "$already" = 1 ] || started_pg=1
fi
cleanup() {
  if [ "$started_pg" = 1 ]; then
    say "stopping the local Postgres (its data stays until make db-destroy)"
    PG_STOP_FROM_RUN=1 scripts/pg.sh stop 2>/dev/null || true
  fi
  say "stopped"
}
trap cleanup EXIT
mkdir -p .state/bin
if [ -x .state/bin/agentpack-local ]; then
  say "building the gateway (go build ./cmd/local)"
else
  say "building the gateway (go build ./cmd/local; the first run compiles every dependency and takes a few minutes)"
fi
t0=$SECONDS
go build -o .state/bin/agentpack-local ./cmd/local
say "built in $((SECONDS - t0)) s"
# Every port is checked before the database is touched (serve binds them again first).
.state/bin/agentpack-local check-ports || exit 1
say "migrating the database"
.state/bin/agentpack-local migrate
say "seeding the catalog and the demo workspace"
.state/bin/agentpack-local seed
export CATALOG_DIR="${CATALOG_DIR:-.state/catalog}"
.state/bin/agentpack-local serve

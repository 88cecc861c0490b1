#!/usr/bin/env bash
# run.sh — `make run`: Postgres (DATABASE_URL or the local cluster in .state/pg, kept until make db-destroy), migrations,
# seed, then every function's handler and the demo upstream on one port until Ctrl-C.
# Each step prints a "make run:" line first (a cold first run compiles for minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
say() { printf 'make run: %s\n' "$*" >&2; }
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
    scripts/pg.sh stop || true
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
say "migrating the database"
.state/bin/agentpack-local migrate
say "seeding the catalog and the demo workspace"
.state/bin/agentpack-local seed
export CATALOG_DIR="${CATALOG_DIR:-.state/catalog}"
.state/bin/agentpack-local serve

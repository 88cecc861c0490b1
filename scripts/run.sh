#!/usr/bin/env bash
# run.sh — `make run`: Postgres (DATABASE_URL or a throwaway local cluster), migrations,
# seed, then every function's handler and the demo upstream on one port until Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."
started_pg=0
if [ -z "${DATABASE_URL:-}" ]; then
  scripts/pg.sh status >/dev/null 2>&1 && already=1 || already=0
  DATABASE_URL=$(scripts/pg.sh start)
  export DATABASE_URL
  [ "$already" = 1 ] || started_pg=1
fi
cleanup() { [ "$started_pg" = 1 ] && scripts/pg.sh stop || true; }
trap cleanup EXIT
mkdir -p .state/bin
go build -o .state/bin/agentpack-local ./cmd/local
.state/bin/agentpack-local migrate
.state/bin/agentpack-local seed
export CATALOG_DIR="${CATALOG_DIR:-.state/catalog}"
.state/bin/agentpack-local serve

#!/usr/bin/env bash
# with-db.sh CMD... — run CMD with DATABASE_URL set: the caller's, or the local throwaway
# cluster's (started if needed and left running; `make db-stop` stops it).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${DATABASE_URL:-}" ]; then
  DATABASE_URL=$(scripts/pg.sh start)
  export DATABASE_URL
fi
exec "$@"

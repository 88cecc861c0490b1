#!/usr/bin/env bash
# fuzz.sh [SECONDS] — run every native Go fuzz target for SECONDS each (default 8).
# `go test -fuzz` takes one package and one target at a time, so the targets are listed
# here (package and name). `make test` runs `scripts/fuzz.sh 5` (about 40 s in all);
# `make fuzz` runs longer (FUZZTIME, default 60 s each). A target that needs Postgres
# (the gateway request path) uses TEST_DATABASE_URL like every DB test. A failure leaves
# the crashing input under the package's testdata/fuzz/<Target>/: commit it with the fix
# so that it becomes a regression seed in every ordinary `go test` run.
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-8}"
targets=(
  "./shared/names FuzzExposed"
  "./shared/names FuzzCatalogUnique"
  "./shared/headers FuzzValidate"
  "./shared/urlguard FuzzCheckURL"
  "./shared/catalog FuzzDecode"
  "./functions/mcp/gateway FuzzGatewayRPC"
  "./functions/mcp/gateway FuzzForwardDecoder"
  "./shared/mcpclient FuzzMemberEdits"
)
for t in "${targets[@]}"; do
  set -- $t
  echo "== fuzz $2 ($1, ${secs}s)"
  # -parallel 2 keeps the run bounded on small machines; -run '^$' skips the unit tests.
  if ! out=$(go test -run '^$' -fuzz "^$2\$" -fuzztime "${secs}s" -parallel 2 "$1" 2>&1); then
    echo "$out"
    exit 1
  fi
  echo "$out" | tail -n 2
done

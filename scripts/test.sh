#!/usr/bin/env bash
# test.sh — `make test`: make lint (gofmt, go vet, staticcheck, deadcode), then every Go test under the race detector against a real
# Postgres (TEST_DATABASE_URL: the caller's DATABASE_URL, or a throwaway local cluster
# started here and stopped on exit) and real MCP peers (npm, pinned in test/npm), then the
# infrastructure checks. REQUIRE_DB=1 and REQUIRE_PEERS=1 turn "skip" into "fail" so that
# nothing silently stops being tested.
set -euo pipefail
cd "$(dirname "$0")/.."
started_pg=0
if [ -z "${DATABASE_URL:-}" ]; then
  scripts/pg.sh status >/dev/null 2>&1 && already=1 || already=0
  DATABASE_URL=$(scripts/pg.sh start)
  [ "$already" = 1 ] || started_pg=1
fi
cleanup() { [ "$started_pg" = 1 ] && scripts/pg.sh stop || true; }
trap cleanup EXIT
export TEST_DATABASE_URL="$DATABASE_URL" REQUIRE_DB=1 REQUIRE_PEERS=1
unset DATABASE_URL

# The admin console: the committed bundle must match its sources, and the browser test
# (functions/marketplace/console) needs Debian's chromium; REQUIRE_BROWSER=1 makes its
# absence a failure. Screenshots and timings go to .state/console-test.
if grep -qs '^console-check:' mk/*.mk; then
  echo "== console bundle + chromium"
  make --no-print-directory console-check chromium-deps
  export REQUIRE_BROWSER=1
fi

echo "== lint (gofmt, go vet, staticcheck, deadcode)"
make --no-print-directory lint
echo "== go test -race"
# ./infra/... runs once, below, with the emulator installed and REQUIRE_INFRA=1. The
# console's browser tests run alone afterwards: they measure page-interactive time, which
# the parallel race-instrumented packages would only disturb (their Go code is the REST
# stack, race-tested by the packages above).
console_pkg=github.com/agentpack/gateway/functions/marketplace/console
# -p 16: many packages spend their time waiting (node peers, the conformance runner,
# Postgres), so sixteen test binaries at a time keep the two cores busy building and testing
# (go test's default is one package per core).
go test -race -count=1 -p 16 -timeout 20m $(go list ./... | grep -v '/infra/' | grep -vx "$console_pkg")
echo "== console browser tests"
mkdir -p .state
go test -count=1 -timeout 10m -v "$console_pkg" 2>&1 | tee .state/console-test.log \
  | grep -E '^(--- |ok|FAIL)|_test\.go:[0-9]+:|interactive|full load|in-app navigation|fresh browser'
echo "== infra"
make --no-print-directory infra-test
scripts/fuzz.sh 3  # short native fuzzing pass over every target, one at a time (make fuzz runs longer)
echo "== all tests passed"

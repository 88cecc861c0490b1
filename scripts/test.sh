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
moto_pid=""
cleanup() {
  [ -n "$moto_pid" ] && kill -- -"$moto_pid" 2>/dev/null || true
  [ "$started_pg" = 1 ] && scripts/pg.sh stop || true
}
trap cleanup EXIT
export TEST_DATABASE_URL="$DATABASE_URL" REQUIRE_DB=1 REQUIRE_PEERS=1
unset DATABASE_URL
# Readiness deadlines and hang-catching bounds in the tests scale with this (testpeer.Scaled;
# docs/TESTING.md). The waits end as soon as a peer is ready, so 2 costs nothing when idle.
export TEST_TIMEOUT_SCALE="${TEST_TIMEOUT_SCALE:-2}"

# moto_server: one real AWS API endpoint (S3, KMS, Secrets Manager) for the whole suite,
# started once here instead of once per test (its Python start-up is slow on a busy
# machine). Tests reach it through MOTO_URL (testpeer.Moto).
mkdir -p .state
if command -v moto_server >/dev/null 2>&1 && [ -z "${MOTO_URL:-}" ]; then
  moto_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  setsid moto_server -H 127.0.0.1 -p "$moto_port" >.state/moto.log 2>&1 &
  moto_pid=$!
  for _ in $(seq 1 600); do  # ≤ 120 s
    (exec 3<>"/dev/tcp/127.0.0.1/$moto_port") 2>/dev/null && break
    kill -0 "$moto_pid" 2>/dev/null || break
    sleep 0.2
  done
  if ! (exec 3<>"/dev/tcp/127.0.0.1/$moto_port") 2>/dev/null; then
    echo "moto_server did not start on 127.0.0.1:$moto_port; its output:" >&2
    cat .state/moto.log >&2
    exit 1
  fi
  export MOTO_URL="http://127.0.0.1:$moto_port"
  echo "== moto_server on $MOTO_URL"
fi

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
# -p: how many test binaries build and run at once (TEST_P; docs/TESTING.md has the
# measurements behind the default). -p 16 drove a 2-core machine to a load of 17 and made
# timing-sensitive peers miss their marks.
phase_start=$SECONDS
go test -race -count=1 -p "${TEST_P:-4}" -timeout 25m $(go list ./... | grep -v '/infra/' | grep -vx "$console_pkg")
echo "== go test -race phase: $((SECONDS - phase_start)) s with -p ${TEST_P:-4}"
echo "== console browser tests"
mkdir -p .state
go test -count=1 -timeout 10m -v "$console_pkg" 2>&1 | tee .state/console-test.log \
  | grep -E '^(--- |ok|FAIL)|_test\.go:[0-9]+:|interactive|full load|in-app navigation|fresh browser'
echo "== infra"
make --no-print-directory infra-test
scripts/fuzz.sh 3  # short native fuzzing pass over every target, one at a time (make fuzz runs longer)
echo "== all tests passed"

#!/usr/bin/env bash
# fuzz.sh [SECONDS] — run every native Go fuzz target for SECONDS each (default 8).
# `go test -fuzz` takes one package and one target at a time; the targets are found here
# (every `func FuzzX(` in a *_test.go file), so a new one is fuzzed without being listed.
# `make test` runs `scripts/fuzz.sh 3`; `make fuzz` runs longer (FUZZTIME, default 60 s
# each). A target that needs Postgres (the gateway request path) uses TEST_DATABASE_URL
# like every DB test. A failure leaves the crashing input under the package's
# testdata/fuzz/<Target>/: commit it with the fix so that it becomes a regression seed in
# every ordinary `go test` run.
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-8}"
targets=()
while IFS=: read -r file name; do
  targets+=("./$(dirname "$file") $name")
done < <(git grep -o -E '^func Fuzz[A-Za-z0-9_]+' -- '*_test.go' | sed -E 's/:func /:/' | sort)
[ "${#targets[@]}" -gt 0 ] || { echo "fuzz.sh: no fuzz targets found" >&2; exit 1; }
for t in "${targets[@]}"; do
  set -- $t
  echo "== fuzz $2 ($1, ${secs}s)"
  # -parallel 2 keeps the run bounded on small machines; -run '^$' skips the unit tests.
  # A duration -fuzztime can end in a bare "context deadline exceeded" with no failing
  # input: Go's fuzz coordinator races its own deadline on a busy machine (go.dev/issue/75804,
  # fixed in Go 1.27). Such a run is retried once; a run that wrote a failing input, or any
  # other failure, fails at once.
  for attempt in 1 2; do
    if out=$(go test -run '^$' -fuzz "^$2\$" -fuzztime "${secs}s" -parallel 2 "$1" 2>&1); then
      break
    fi
    if [ "$attempt" = 1 ] && grep -q 'context deadline exceeded' <<<"$out" && ! grep -q 'Failing input written' <<<"$out"; then
      echo "fuzz.sh: $2 stopped on the fuzz coordinator's deadline race (go.dev/issue/75804), no failing input: once more"
      continue
    fi
    echo "$out"
    exit 1
  done
  echo "$out" | tail -n 2
done

# mk/bench.mk — `make bench` (issue 8): the gateway's cost per request, its overhead over a
# direct upstream call, and cold start, in one table. Not part of `make test`.
# Loopback only; needs Postgres (scripts/with-db.sh starts the local one) and, for the
# emulator row, aws-lambda-rie (installed by rie-install). About 3–4 minutes on 2 cores.

BENCH_N ?= 2000
BENCH_TIME ?= 2s

.PHONY: bench
bench: rie-install npm-deps ## Benchmarks: tools/list by catalog size, built-in read, proxied echo vs direct, cold start, RSS, sizes (one table)
	scripts/with-db.sh $(GO) run ./cmd/bench -n $(BENCH_N) -benchtime $(BENCH_TIME)

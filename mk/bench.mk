# mk/bench.mk — `make bench` (issue 8): the gateway's cost per request, its overhead over a
# direct upstream call, and cold start, in one table, then the scale table
# (one workspace at BENCH_SCALE connections × 20 tools). Not part of `make test`.
# Loopback only; needs Postgres (scripts/with-db.sh starts the local one) and, for the
# emulator row, aws-lambda-rie (installed by rie-install). About 3–4 minutes on 2 cores.

BENCH_N ?= 2000
BENCH_TIME ?= 2s
# BENCH_SCALE: the connection counts of the scale table (× 20 tools each; docs/CATALOG.md).
BENCH_SCALE ?= 1,10,100,1000

.PHONY: bench
bench: rie-install npm-deps ## Benchmarks: tools/list by catalog size, built-in read, proxied echo vs direct, cold start, RSS, sizes (one table)
	scripts/with-db.sh $(GO) run ./cmd/bench -n $(BENCH_N) -benchtime $(BENCH_TIME) -scale $(BENCH_SCALE)

.PHONY: bench-scale
bench-scale: rie-install ## The scale table of make bench alone (BENCH_SCALE connection counts × 20 tools; emulator cold starts need aws-lambda-rie)
	scripts/with-db.sh $(GO) run ./cmd/bench -only scale -n $(BENCH_N) -scale $(BENCH_SCALE)

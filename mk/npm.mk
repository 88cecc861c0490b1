# mk/npm.mk — the pinned npm test peers (test/npm: server-everything, the official TypeScript
# SDK client, the conformance suite). Included by the main Makefile (`include mk/*.mk`).
#
# `npm ci` runs only when test/npm/node_modules is missing or older than the lockfile (or
# package.json): node_modules/.package-lock.json, which npm writes on every install, is the
# stamp. Tests that need the peers skip without them unless REQUIRE_PEERS=1.

NPM_DIR ?= test/npm
NPM_STAMP := $(NPM_DIR)/node_modules/.package-lock.json

.PHONY: npm-deps
npm-deps: $(NPM_STAMP) ## Install the pinned npm test peers (npm ci in test/npm) when missing or stale

$(NPM_STAMP): $(NPM_DIR)/package-lock.json $(NPM_DIR)/package.json
	cd $(NPM_DIR) && npm ci --no-audit --no-fund
	@touch $@

# mk/console.mk — the admin console's front end (web/console: Preact, bundled by esbuild,
# pinned in web/console/package-lock.json) and the headless Chromium its browser test
# drives. Included by the main Makefile.
#
# The built bundle is committed under functions/marketplace/console/dist so that a fresh
# clone compiles (go:embed) and `make build` / `make run` need no node. `make console`
# rebuilds it after editing web/console/src; `make console-check` (run by `make test`)
# rebuilds into a temporary folder and fails when the committed bundle differs.

CONSOLE_DIR := web/console
CONSOLE_STAMP := $(CONSOLE_DIR)/node_modules/.package-lock.json
CONSOLE_DIST := functions/marketplace/console/dist
CONSOLE_CHECK_OUT := $(CURDIR)/.state/console-check

.PHONY: console console-check console-deps chromium-deps

console-deps: $(CONSOLE_STAMP) ## Install the console's pinned npm build tools (npm ci in web/console)

$(CONSOLE_STAMP): $(CONSOLE_DIR)/package-lock.json $(CONSOLE_DIR)/package.json
	cd $(CONSOLE_DIR) && npm ci --no-audit --no-fund
	@touch $@

console: console-deps ## Rebuild the admin console bundle (commit functions/marketplace/console/dist with the sources)
	cd $(CONSOLE_DIR) && node build.mjs
	@ls -l $(CONSOLE_DIST)/assets

console-check: console-deps ## Fail when the committed console bundle does not match web/console/src
	@cd $(CONSOLE_DIR) && node build.mjs --out $(CONSOLE_CHECK_OUT)
	@diff -r $(CONSOLE_CHECK_OUT) $(CONSOLE_DIST) >/dev/null || { \
	  echo "console-check: $(CONSOLE_DIST) is stale; run make console and commit it" >&2; \
	  diff -r $(CONSOLE_CHECK_OUT) $(CONSOLE_DIST) | head -20 >&2; exit 1; }
	@echo "console-check: committed bundle matches the sources"

# The browser test uses Debian's chromium (no browser download: CHROMIUM_PATH picks
# another). Installed here when missing; apt-get update first when the lists are empty.
chromium-deps: ## Install Debian's chromium for the console browser test when missing
	@if command -v chromium >/dev/null 2>&1 || [ -n "$${CHROMIUM_PATH:-}" ]; then exit 0; fi; \
	  SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  apt-cache show chromium >/dev/null 2>&1 || $$SUDO apt-get update -qq; \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium

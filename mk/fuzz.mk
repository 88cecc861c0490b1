# mk/fuzz.mk — native Go fuzzing (scripts/fuzz.sh). Included by the main Makefile
# (`include mk/*.mk`). `make test` runs a short pass (3 s per target); this target runs a
# longer one. Seeds live in the tests (f.Add) and in each package's testdata/fuzz.

FUZZTIME ?= 60

.PHONY: fuzz
fuzz: ## Fuzz every target for FUZZTIME seconds each (default 60): names, headers, URL guard, catalog decoder, gateway JSON-RPC path
	scripts/with-db.sh sh -c 'TEST_DATABASE_URL="$$DATABASE_URL" REQUIRE_DB=1 scripts/fuzz.sh $(FUZZTIME)'

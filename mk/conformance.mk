# mk/conformance.mk — the official MCP conformance suite against the gateway. Included by the
# main Makefile (`include mk/*.mk`). `make test` runs the same Go test (TestConformance) with
# every other test; this target runs it alone, verbosely.
#
# What runs (functions/mcp/gateway/conformance): @modelcontextprotocol/conformance 0.1.16 on
# Node 22 (both pinned in test/npm) against (1) the aggregate endpoint's protocol-level
# scenarios and (2) every server scenario through the single-server endpoint in front of a Go
# fixture upstream, with expected-failures.yaml as the baseline; then every 2026-07-28 scenario
# of 0.2.0-alpha.12 (`--spec-version 2026-07-28 --suite all`): gating on the single-server
# endpoint with expected-failures-2026-07-28.yaml as the baseline, reported on the aggregate
# endpoint; and the io.modelcontextprotocol/tasks extension scenarios by name against a
# second fixture (taskfixture_test.go), gating with the same baseline. A loopback proxy adds
# the bearer token.

.PHONY: conformance
conformance: npm-deps ## Run the MCP conformance suite against the gateway (aggregate + single-server endpoints)
	scripts/with-db.sh sh -c 'TEST_DATABASE_URL="$$DATABASE_URL" REQUIRE_DB=1 REQUIRE_PEERS=1 go test -count=1 -v -run TestConformance ./functions/mcp/gateway/conformance/'

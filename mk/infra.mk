# mk/infra.mk — infrastructure targets (docs/DESIGN.md §10, §12): SAM, CDK, LocalStack, the
# Lambda runtime emulator, and the template checks. Included by the Makefile.
#
# Needs nothing but Go, node and cfn-lint: rie-install, cdk-synth, infra-test, build-*.
# Needs the SAM CLI: sam-build. Needs the SAM CLI and Docker: sam-local.
# Needs LocalStack (Docker) and samlocal (pip install aws-sam-cli-local): deploy-localstack.

INFRA_FUNCTIONS := mcp marketplace pins healthcheck
# The migration function (cmd/migrate; docs/DEPLOY.md): built like a function, from cmd/.
INFRA_ASSETS := $(INFRA_FUNCTIONS) migrate
INFRA_BUILD_FLAGS := -tags lambda.norpc -trimpath -ldflags='-s -w'

# The Lambda runtime interface emulator has no tagged releases: pin the pseudo-version
# (`go list -m -versions github.com/aws/aws-lambda-runtime-interface-emulator` lists none;
# `go list -m ...@latest` gave this one).
RIE_VERSION := v0.0.0-20261030222936-bef5c4ba774d
RIE := $(CURDIR)/.state/bin/aws-lambda-rie

# AWS's cfn-lint (Python, with the SAM translator) — not the unrelated npm package.
CFN_LINT ?= $(firstword $(wildcard /root/.pyenv/shims/cfn-lint) cfn-lint)
SAM ?= sam
SAMLOCAL ?= samlocal

# Synth output of the placeholder-asset synth that the parity test reads (kept apart from
# infra/cdk/cdk.out, which `cdk-synth` fills with the real bootstraps).
CDK_CHECK_OUT := $(CURDIR)/.state/cdk-check.out

# ---------------------------------------------------------------- SAM makefile builder
# `sam build` runs `make build-<LogicalId>` with ARTIFACTS_DIR set (BuildMethod: makefile).
.PHONY: build-McpFunction build-MarketplaceFunction build-PinsFunction build-HealthCheckFunction build-MigrationFunction
build-McpFunction:
	$(call sam_go_build,mcp)
build-MarketplaceFunction:
	$(call sam_go_build,marketplace)
build-PinsFunction:
	$(call sam_go_build,pins)
build-HealthCheckFunction:
	$(call sam_go_build,healthcheck)
build-MigrationFunction:
	$(call sam_go_build_pkg,./cmd/migrate)

define sam_go_build
	$(call sam_go_build_pkg,./functions/$(1))
endef

define sam_go_build_pkg
	@test -n "$(ARTIFACTS_DIR)" || { echo "ARTIFACTS_DIR is not set: this target is for sam build" >&2; exit 1; }
	GOOS=linux GOARCH=arm64 CGO_ENABLED=0 go build $(INFRA_BUILD_FLAGS) -o "$(ARTIFACTS_DIR)/bootstrap" $(1)
endef

# ---------------------------------------------------------------- SAM / LocalStack
.PHONY: sam-build sam-local deploy-localstack deploy
sam-build: ## sam build through the makefile builder (needs the SAM CLI; no Docker)
	$(SAM) build

# docs/DEPLOY.md. The SAM CLI is not installed here (nor in CI): this target is for a
# machine with it and AWS credentials. DEPLOY_ARGS=--guided asks for every parameter.
DEPLOY_ARGS ?= --guided
deploy: ## sam build + sam deploy (DEPLOY_ARGS, default --guided; needs the SAM CLI and AWS credentials, not installed here); docs/DEPLOY.md
	@command -v $(SAM) >/dev/null 2>&1 || { echo "deploy: the SAM CLI ($(SAM)) is not installed: see docs/DEPLOY.md, Prerequisites" >&2; exit 1; }
	$(SAM) build
	$(SAM) deploy $(DEPLOY_ARGS)

# On Linux the function containers share the host network so that 127.0.0.1:54329 (the
# local Postgres of scripts/pg.sh) is reachable; elsewhere edit infra/local/env.json.
SAM_LOCAL_NET := $(if $(filter Linux,$(shell uname -s)),--docker-network host,)
sam-local: sam-build ## sam local start-api on 127.0.0.1:3000 against the local Postgres (needs SAM CLI + Docker; run `make db-start migrate seed` first)
	$(SAM) local start-api --env-vars infra/local/env.json --host 127.0.0.1 --port 3000 $(SAM_LOCAL_NET)

deploy-localstack: ## Deploy the stack to LocalStack with DatabaseUrl set (needs LocalStack + samlocal + Docker; see infra/README.md)
	$(SAMLOCAL) build --config-env localstack
	$(SAMLOCAL) deploy --config-env localstack

# docs/DEPLOY.md "Smoke test": health, the RFC 9728 and RFC 8414 metadata, an
# unauthenticated 401 and the console page of a running stack (URL: its base URL, e.g. the
# BaseUrl output, or http://127.0.0.1:8080 for make run).
.PHONY: smoke
smoke: ## Check a running stack from outside: make smoke URL=https://… (health, OAuth metadata, 401, console); says what is wrong
	@test -n "$(URL)" || { echo "usage: make smoke URL=<the stack's base URL>" >&2; exit 2; }
	$(GO) run ./cmd/smoke "$(URL)"

# ---------------------------------------------------------------- CDK
.PHONY: cdk-synth cdk-synth-check
cdk-synth: build ## Synthesize the Go CDK app into infra/cdk/cdk.out from bin/*/bootstrap (needs node; no cdk CLI)
	cd infra/cdk && CDK_OUTDIR=cdk.out JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION=1 \
	  AGENTPACK_ASSET_DIR=$(CURDIR)/bin go run .
	@ls infra/cdk/cdk.out/*.template.json

# The same synth with placeholder bootstraps, for the checks: they compare templates, not
# binaries, and must not depend on a cross-compiled build.
cdk-synth-check:
	@rm -rf $(CDK_CHECK_OUT) && mkdir -p $(CDK_CHECK_OUT)/assets
	@for fn in $(INFRA_ASSETS); do mkdir -p $(CDK_CHECK_OUT)/assets/$$fn && echo placeholder > $(CDK_CHECK_OUT)/assets/$$fn/bootstrap; done
	cd infra/cdk && CDK_OUTDIR=$(CDK_CHECK_OUT)/cdk.out JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION=1 \
	  AGENTPACK_ASSET_DIR=$(CDK_CHECK_OUT)/assets go run . 2> >(grep -v '^!!' >&2)

# ---------------------------------------------------------------- emulator + checks
.PHONY: rie-install infra-test infra-report
rie-install: $(RIE) ## Install the pinned AWS Lambda runtime interface emulator into .state/bin
$(RIE):
	GOBIN=$(CURDIR)/.state/bin go install github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@$(RIE_VERSION)

infra-test: rie-install cdk-synth-check ## cfn-lint both templates, CDK assertions, goformation + parity + emulator tests (needs TEST_DATABASE_URL for the emulator)
	@$(CFN_LINT) --version | grep -q '^cfn-lint 1\.' || { echo "$(CFN_LINT) is not AWS's cfn-lint 1.x" >&2; exit 1; }
	$(CFN_LINT) template.yaml
	# W3005 (a DependsOn also implied by a GetAtt) is how CDK always writes its roles.
	$(CFN_LINT) --ignore-checks W3005 -- $(CDK_CHECK_OUT)/cdk.out/AgentpackGateway.template.json
	cd infra/cdk && JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION=1 go test -count=1 ./... 2> >(grep -v '^!!' >&2)
	@mkdir -p .state
	REQUIRE_INFRA=1 RIE=$(RIE) CDK_OUT_DIR=$(CDK_CHECK_OUT)/cdk.out go test -count=1 -v ./infra/... 2>&1 \
	  | tee .state/infra-test.log | grep -E '^(--- |ok|FAIL|PASS)|(size|cold start):'

infra-report: rie-install ## Print binary size and cold start (process start → first answer) of each function under the emulator
	RIE=$(RIE) go test -count=1 -run 'TestEmulator' -v ./infra/check | grep -E '^(--- |ok|FAIL)|(size|cold start):'

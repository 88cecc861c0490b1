# mk/pgbouncer.mk — Debian's PgBouncer, the transaction pooler that stands in for RDS Proxy
# in the tests (testpeer.PgBouncer; docs/DATABASE.md). Included by the main Makefile.
# Installed when missing (apt-get update first when the lists are empty); the tests start
# their own instance on a free port, never the system service.

.PHONY: pgbouncer-deps
pgbouncer-deps: ## Install Debian's pgbouncer for the transaction-pooler test when missing
	@if command -v pgbouncer >/dev/null 2>&1 || [ -x /usr/sbin/pgbouncer ]; then exit 0; fi; \
	  SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  apt-cache show pgbouncer >/dev/null 2>&1 || $$SUDO apt-get update -qq; \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq pgbouncer

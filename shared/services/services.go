// Package services holds the domain services of shared/... as one value (Services), the
// thing the handlers embed and act through: the REST API (functions/marketplace/api), the
// built-in tools (functions/mcp/gateway/builtin) and the gateway (functions/mcp/gateway).
// It imports only domain packages, so a handler can take it without reaching the wiring
// from the environment (shared/deps, which builds it once per process: deps.Build calls
// NewServices). test/rules/composition_test.go keeps shared/deps out of the handlers.
package services

import (
	"log/slog"
	"time"

	"github.com/agentpack/gateway/shared/catalogentries"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/grants"
	"github.com/agentpack/gateway/shared/identity"
	"github.com/agentpack/gateway/shared/idp"
	"github.com/agentpack/gateway/shared/overrides"
	"github.com/agentpack/gateway/shared/pins"
	"github.com/agentpack/gateway/shared/policy"
	"github.com/agentpack/gateway/shared/ratelimit"
	"github.com/agentpack/gateway/shared/registry"
	"github.com/agentpack/gateway/shared/urlguard"
	"github.com/agentpack/gateway/shared/workspaces"
)

// RegistryFetchTimeout bounds one registry fetch of the importer (the registry sync's
// bound; a REST or built-in import is cut earlier by its request's own deadline).
const RegistryFetchTimeout = 60 * time.Second

// Services are the domain services of shared/..., built once per process (deps.Build
// calls NewServices) and handed whole to the handlers that act through them: the REST API
// (functions/marketplace/api), the built-in tools (functions/mcp/gateway/builtin), the
// gateway, the pins and health-check functions. Nothing else constructs a service:
// test/rules/services_test.go keeps it so. Every field is non-nil once built.
type Services struct {
	// Connections is connections CRUD, installs, tests and refreshes (shared/connections).
	Connections *connections.Service
	// Entries are the shared catalog's entries (superuser writes).
	Entries *catalogentries.Service
	// Overrides are the workspaces' tool overrides (docs/OVERRIDES.md); their writes
	// rebuild documents in the connections' catalog store.
	Overrides *overrides.Service
	// RateLimits are the workspaces' rate limits (docs/RATE-LIMITS.md); a change
	// republishes the workspace's document through Connections.
	RateLimits *ratelimit.Service
	// Policies are the access-policy documents (docs/POLICIES.md).
	Policies *policy.Service
	// Registry imports MCP registries into the catalog (docs/REGISTRY.md), fetching
	// through the process's URL guard.
	Registry *registry.Importer
	// Workspaces resolves a call's project (the default project rule).
	Workspaces *workspaces.Service
	// Pins are the per-chat pins (docs/DESIGN.md §7).
	Pins *pins.Service
	// People are people and memberships (shared/identity).
	People *identity.Service
	// Grants are the grants of the gateway's own authorization server (shared/grants).
	// Whether that server runs is the composition's choice (gateway.Options.OwnAuthServer,
	// api.API.AuthServer): without it the grants are never consulted.
	Grants *grants.Service
	// IDPs are the trusted enterprise identity providers of the authorization server's
	// ID-JAG grant (shared/idp, docs/AUTH.md "The enterprise path").
	IDPs *idp.Service
}

// NewServices builds every service over pool. conns is the connection service (deps.Build
// makes it with the catalog store, the upstream pool and the guard); the overrides and
// policies rebuild documents in its Store, the rate limits republish through it. With conns
// nil (tests of a single service) those writes commit and leave the documents to the next
// rebuild, and Connections stays nil. guard is the URL guard the registry is fetched
// through (nil: the importer's strict default, https and public addresses only); logger
// nil discards.
func NewServices(pool *db.Pool, conns *connections.Service, guard *urlguard.Guard, logger *slog.Logger) Services {
	s := Services{
		Connections: conns,
		Entries:     &catalogentries.Service{Pool: pool, Logger: logger},
		Overrides:   &overrides.Service{Pool: pool, Logger: logger},
		RateLimits:  &ratelimit.Service{Pool: pool, Logger: logger},
		Policies:    &policy.Service{Pool: pool, Logger: logger},
		Registry:    &registry.Importer{Pool: pool, Logger: logger},
		Workspaces:  &workspaces.Service{Pool: pool},
		Pins:        &pins.Service{Pool: pool, Logger: logger},
		People:      &identity.Service{Pool: pool},
		Grants:      &grants.Service{Pool: pool},
		IDPs:        &idp.Service{Pool: pool},
	}
	if conns != nil {
		s.Overrides.Store, s.Policies.Store = conns.Store, conns.Store
		s.RateLimits.Publish = conns.PublishWorkspace
	}
	if guard != nil {
		s.Registry.HTTPClient = guard.HTTPClient(RegistryFetchTimeout)
	}
	return s
}

// SetOnCatalogChange makes f the hook every service that rebuilds catalog documents calls
// after a rebuild (connections, overrides, policies), with the workspaces rebuilt (nil:
// all). The local entry point invalidates its in-process gateway cache there.
func (s *Services) SetOnCatalogChange(f func(workspaces []string)) {
	if s.Connections != nil {
		s.Connections.OnCatalogChange = f
	}
	s.Overrides.OnCatalogChange = f
	s.Policies.OnCatalogChange = f
}

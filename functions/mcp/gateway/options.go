package gateway

import (
	"io"

	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/deps"
)

// FromDeps returns the Options a process built from deps uses; EMF metrics go to
// metrics (stdout in Lambda).
func FromDeps(d *deps.Deps, metrics io.Writer) Options {
	o := Options{
		Pool: d.Pool, Catalog: d.CatalogCache(),
		Upstreams: d.Upstreams, Verifier: d.Verifier, Connections: d.Connections, Logger: d.Logger,
		Metrics: metrics, PublicBaseURL: d.Config.PublicBaseURL, AuthServerURL: d.Config.AuthServerURL,
		AllowedOrigins: d.Config.AllowedOrigins,
	}
	if d.Config.UnauthenticatedLocal && !d.Config.Deployed() {
		o.UnauthenticatedPrincipal = &auth.Principal{Subject: "local-unauthenticated", Role: auth.RoleAdmin}
	}
	return o
}

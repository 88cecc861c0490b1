package api

import (
	"slices"

	"github.com/agentpack/gateway/shared/restdoc"
)

// Route is one authenticated REST route: an http.ServeMux pattern ("METHOD /path"), its
// handler, and its operation in the OpenAPI document (the types it reads and answers,
// its words and its error codes; shared/restdoc). Handler registers Pattern; openapi.go
// builds the document from Op.
type Route struct {
	Pattern string
	handler func(a *API) handlerFunc
	Op      restdoc.Op
}

// Routes are the authenticated routes of Handler, in registration order: the tables of
// the routes_*.go files, one per area, concatenated. Neither the mux (Go 1.22 patterns:
// the most specific wins) nor the generated document depends on the order.
var Routes = slices.Concat(authServerRoutes, catalogRoutes, connectionRoutes, workspaceRoutes, governanceRoutes)

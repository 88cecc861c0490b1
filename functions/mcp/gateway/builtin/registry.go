package builtin

import (
	"context"

	"github.com/agentpack/gateway/shared/registry"
	gschema "github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// registryDefinitions declares agentpack_registry_import (superuser): the REST
// POST /api/mcp-marketplace/registry-import {url} on the MCP side, through the same
// registry.Importer and the deployment's guarded HTTP client (docs/REGISTRY.md). It is a
// platform tool: listed to superusers only (SuperuserOnly); anyone else calling it by name
// gets FORBIDDEN from the access check.
func (s *Set) registryDefinitions() []*Builtin {
	return []*Builtin{
		{
			Name: "agentpack_registry_import", Version: "1.0.0", Toolset: toolsetInstall, AdminOnly: true, SuperuserOnly: true,
			Title:       "Import an MCP registry",
			Description: "Import an MCP registry's servers into the shared catalog (superuser only) through its v0.1 list API, from its http(s) base URL such as https://registry.modelcontextprotocol.io. Answers the report, document by document; a document refused is in the report, never a failure.",
			Input:       Input{Props: map[string]*gschema.Schema{"url": {MinLength: ptr(1), MaxLength: ptr(2048)}}},
			Annotations: mcp.ToolAnnotations{DestructiveHint: ptr(false), IdempotentHint: true, OpenWorldHint: ptr(true)},
			Handler:     Typed(s.registryImport),
		},
	}
}

type registryImportArgs struct {
	URL string `json:"url"`
}

// registryImport answers the import's report (registry.Report).
func (s *Set) registryImport(ctx context.Context, c *Call, a registryImportArgs) (registry.Report, error) {
	rep, err := s.svc.Registry.FromURL(ctx, c.Principal, a.URL)
	if err != nil {
		return registry.Report{}, err
	}
	return *rep, nil
}

package api_test

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/gateway/functions/marketplace/api"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/overrides"
	"github.com/agentpack/gateway/shared/pins"
	"github.com/agentpack/gateway/shared/ratelimit"
)

// schemaMembers are the property names of schema s of doc: its properties, the union of
// its allOf parts, or those of the schema its $ref names.
func schemaMembers(t *testing.T, doc map[string]any, s map[string]any) []string {
	t.Helper()
	if ref, ok := s["$ref"].(string); ok {
		name := strings.TrimPrefix(ref, "#/components/schemas/")
		target, ok := doc["components"].(map[string]any)["schemas"].(map[string]any)[name].(map[string]any)
		if !ok {
			t.Fatalf("unresolved $ref %s", ref)
		}
		return schemaMembers(t, doc, target)
	}
	set := map[string]bool{}
	for _, part := range asSlice(s["allOf"]) {
		for _, k := range schemaMembers(t, doc, part.(map[string]any)) {
			set[k] = true
		}
	}
	for k := range asMap(s["properties"]) {
		set[k] = true
	}
	return slices.Sorted(maps.Keys(set))
}

func asSlice(v any) []any        { s, _ := v.([]any); return s }
func asMap(v any) map[string]any { m, _ := v.(map[string]any); return m }
func jsonMembers(v any) []string {
	raw, _ := json.Marshal(v)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return slices.Sorted(maps.Keys(m))
}

// TestViewsAreTheDocumentedSchemas: each view, with every optional member set, has
// exactly the members its schema in openapi.json documents, so the document and the
// views cannot drift apart (the stack tests check each live answer against the document,
// which does not catch an undocumented extra member).
func TestViewsAreTheDocumentedSchemas(t *testing.T) {
	t.Parallel()
	var doc map[string]any
	if err := json.Unmarshal(api.OpenAPIDocument(), &doc); err != nil {
		t.Fatal(err)
	}
	schema := func(name string) map[string]any {
		return map[string]any{"$ref": "#/components/schemas/" + name}
	}
	detail := asMap(asMap(asMap(asMap(asMap(asMap(asMap(doc["paths"])["/api/mcp-connections/{id}"])["get"])["responses"])["200"])["content"])["application/json"])["schema"]

	yes, id, now, state := true, "c1", time.Now(), "connected"
	entry := catalog.NewEntryView(&db.CatalogEntry{}, false)
	entry.Installed, entry.ConnectionID, entry.InstallState = &yes, &id, &state
	conn := &db.Connection{}
	outcome := connections.NewOutcomeView(&connections.Outcome{Connection: conn, Connect: &connections.RefreshResult{},
		CatalogPending: true, Authorization: &connections.Authorization{}, Warnings: []string{"w"}}, true)

	for _, tt := range []struct {
		name   string
		schema map[string]any
		view   any
	}{
		{"CatalogEntry", schema("CatalogEntry"), entry},
		{"Connection", schema("Connection"), connections.NewView(conn, false)},
		{"connection detail", asMap(detail), connections.DetailView{View: connections.NewView(conn, true), Authorization: &connections.AuthorizationState{}}},
		{"ConnectionWithConnect", schema("ConnectionWithConnect"), outcome},
		{"Pin", schema("Pin"), pins.NewPinView(&db.ChatPin{})},
		{"Chat", schema("Chat"), pins.NewChatView(&db.Chat{CreatedAt: &now})},
		{"RateLimit", schema("RateLimit"), ratelimit.NewView(&db.RateLimit{}, nil)},
		{"ToolOverride", schema("ToolOverride"), withPending(overrides.NewView(&db.ToolOverride{}, &db.ConnectionTool{}))},
		{"MyAuthorization", schema("MyAuthorization"), connections.MyAuthorization{}},
	} {
		if got, want := jsonMembers(tt.view), schemaMembers(t, doc, tt.schema); !slices.Equal(got, want) {
			t.Errorf("%s: view members %v, documented %v", tt.name, got, want)
		}
	}
}

func withPending(v overrides.View) overrides.View { v.CatalogPending = true; return v }

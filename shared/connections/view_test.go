package connections

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/gateway/shared/db"
)

// jsonKeys are the members of v's JSON object, sorted.
func jsonKeys(t *testing.T, v any) []string {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return slices.Sorted(maps.Keys(m))
}

// viewMembers are the members of openapi.json #/components/schemas/Connection, which the
// REST routes sent (as a map) before View existed.
var viewMembers = []string{"authMode", "catalogEntryId", "createdAt", "createdBy", "enabled", "handle", "headers",
	"id", "lastConnectedAt", "lastError", "name", "projectId", "scope", "source", "transportType", "updatedAt",
	"url", "workingTransport", "workspaceId"}

func TestNewView(t *testing.T) {
	ws, proj := "w1", "p1"
	row := db.Connection{ID: "c1", Name: "n", Handle: "h", URL: "https://u:p@x.example/mcp?key=secret#frag",
		TransportType: "streamable-http", Headers: map[string]string{"Authorization": "Bearer real-secret"},
		WorkspaceID: &ws, ProjectID: &proj, AuthMode: "headers", CreatedAt: time.Unix(0, 0).UTC()}
	tests := []struct {
		name       string
		row        db.Connection
		fullURL    bool
		urlSecrets bool // the URL keeps its query value
		scope      string
	}{
		{"redacted URL", row, false, false, "project"},
		{"full URL", row, true, true, "project"},
		{"global, no headers", func() db.Connection { r := row; r.Headers, r.WorkspaceID, r.ProjectID = nil, nil, nil; return r }(), false, false, "global"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := NewView(&tt.row, tt.fullURL)
			raw, _ := json.Marshal(v)
			if strings.Contains(string(raw), "real-secret") {
				t.Errorf("header value leaked: %s", raw)
			}
			if got := strings.Contains(v.URL, "secret"); got != tt.urlSecrets {
				t.Errorf("URL %q: query value kept = %v, want %v", v.URL, got, tt.urlSecrets)
			}
			if v.Headers == nil {
				t.Error("headers nil, want {}")
			}
			if v.Scope != tt.scope || v.ID != "c1" || v.Handle != "h" || v.AuthMode != "headers" {
				t.Errorf("fields not copied: %+v", v)
			}
		})
	}
}

// TestViewsKeepTheWireShape: View has exactly the members REST sent before it existed
// (openapi.json Connection; null members included), the detail adds authorization, and
// a write's outcome adds connect, catalogPending, authorization and warnings, each only
// when there is one (openapi.json ConnectionWithConnect).
func TestViewsKeepTheWireShape(t *testing.T) {
	row := &db.Connection{Headers: map[string]string{"X-Key": "sk-1"}}
	if got := jsonKeys(t, NewView(row, false)); !slices.Equal(got, viewMembers) {
		t.Errorf("view members %v, want %v", got, viewMembers)
	}
	plus := func(extra ...string) []string {
		return slices.Sorted(slices.Values(append(slices.Clone(viewMembers), extra...)))
	}

	if got := jsonKeys(t, DetailView{View: NewView(row, true)}); !slices.Equal(got, viewMembers) {
		t.Errorf("detail without authorization %v, want %v", got, viewMembers)
	}
	if got, want := jsonKeys(t, DetailView{View: NewView(row, true), Authorization: &AuthorizationState{Mode: "oauth"}}), plus("authorization"); !slices.Equal(got, want) {
		t.Errorf("detail members %v, want %v", got, want)
	}

	if got := jsonKeys(t, NewOutcomeView(&Outcome{Connection: row}, true)); !slices.Equal(got, viewMembers) {
		t.Errorf("bare outcome members %v, want %v", got, viewMembers)
	}
	full := &Outcome{Connection: row, Connect: &RefreshResult{OK: true}, CatalogPending: true,
		Authorization: &Authorization{Status: "authorized"}, Warnings: []string{"w"}}
	if got, want := jsonKeys(t, NewOutcomeView(full, true)), plus("authorization", "catalogPending", "connect", "warnings"); !slices.Equal(got, want) {
		t.Errorf("outcome members %v, want %v", got, want)
	}
}

package builtin

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/agentpack/gateway/functions/mcp/gateway/request"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/dbtest"
	"github.com/agentpack/gateway/shared/services"
	"github.com/google/uuid"
)

// connectionMembers are the members of a connection in the built-ins' answers: those of
// the REST view (connections.View, openapi.json Connection).
var connectionMembers = []string{"authMode", "catalogEntryId", "createdAt", "createdBy", "enabled", "handle", "headers",
	"id", "lastConnectedAt", "lastError", "name", "projectId", "scope", "source", "transportType", "updatedAt",
	"url", "workingTransport", "workspaceId"}

func sortedKeys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }

const keyedURL = "https://user:pw@mcp.example.com/v1/mcp?api_key=sk-live-1#frag"

// TestConnectionsListAnswer: agentpack_connections_list answers each connection as the
// REST view plus its exposed tool names, header values redacted and the URL as
// visibleURL shows it to the caller (members: no query at all).
func TestConnectionsListAnswer(t *testing.T) {
	t.Parallel()
	pool, _ := dbtest.Fresh(t)
	ctx := context.Background()
	ws := uuid.NewString()
	if err := db.WorkspaceUpsert(ctx, pool, ws, "views"); err != nil {
		t.Fatal(err)
	}
	conn, err := db.ConnectionCreate(ctx, pool, &db.ConnectionNew{Name: "Keyed", URL: keyedURL, TransportType: "streamable-http",
		Headers: map[string]string{"Authorization": "Bearer hdr-secret"}, Enabled: true, Source: "manual", WorkspaceID: &ws, CreatedBy: "a"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{Pool: pool, Services: services.NewServices(pool, &connections.Service{Pool: pool}, nil, nil)})
	if err != nil {
		t.Fatal(err)
	}
	snap := &catalog.Snapshot{Doc: &catalog.Document{Connections: []catalog.Connection{
		{ID: conn.ID, Scope: "workspace", Tools: []catalog.Tool{{ExposedName: "mcp_keyed_echo"}}}}}}
	for _, tt := range []struct {
		name string
		role string
		url  string
	}{
		{"admin", auth.RoleAdmin, "https://[REDACTED]@mcp.example.com/v1/mcp?api_key=[REDACTED]#[REDACTED]"},
		{"member", auth.RoleMember, "https://mcp.example.com/v1/mcp"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := &auth.Principal{Subject: "s", Role: tt.role, Workspaces: []string{ws}}
			st := &request.State{Principal: p, Workspace: ws, Snapshot: snap, RequestID: "req"}
			res, err := s.Call(request.With(ctx, st), s.Lookup("agentpack_connections_list"), json.RawMessage(`{}`))
			if err != nil {
				t.Fatal(err)
			}
			raw := res.StructuredContent.(json.RawMessage)
			if strings.Contains(string(raw), "hdr-secret") || strings.Contains(string(raw), "sk-live-1") {
				t.Fatalf("a secret leaked: %s", raw)
			}
			var env struct {
				Data struct {
					Connections []map[string]any `json:"connections"`
				} `json:"data"`
			}
			if err := json.Unmarshal(raw, &env); err != nil || len(env.Data.Connections) != 1 {
				t.Fatalf("answer %s (%v)", raw, err)
			}
			got := env.Data.Connections[0]
			want := slices.Sorted(slices.Values(append(slices.Clone(connectionMembers), "tools")))
			if k := sortedKeys(got); !slices.Equal(k, want) {
				t.Errorf("members %v, want %v", k, want)
			}
			if got["url"] != tt.url {
				t.Errorf("url %v, want %s", got["url"], tt.url)
			}
			if h, _ := got["headers"].(map[string]any); h["Authorization"] != "[REDACTED]" {
				t.Errorf("headers %v", got["headers"])
			}
			if tools, _ := got["tools"].([]any); len(tools) != 1 || tools[0] != "mcp_keyed_echo" {
				t.Errorf("tools %v", got["tools"])
			}
		})
	}
}

// TestBuiltinOutcome: a write built-in answers connections.OutcomeView (the REST write
// answer's members) with the URL as visibleURL shows it, never the row.
func TestBuiltinOutcome(t *testing.T) {
	ws := "w1"
	out := &connections.Outcome{Connection: &db.Connection{ID: "c1", URL: keyedURL, WorkspaceID: &ws,
		Headers: map[string]string{"X-Key": "hdr-secret"}}, CatalogPending: true, Warnings: []string{"missing header"}}
	for _, tt := range []struct {
		role string
		url  string
	}{
		{auth.RoleAdmin, "https://[REDACTED]@mcp.example.com/v1/mcp?api_key=[REDACTED]#[REDACTED]"},
		{auth.RoleMember, "https://mcp.example.com/v1/mcp"},
	} {
		v := builtinOutcome(&Call{Principal: &auth.Principal{Role: tt.role}}, out)
		raw, _ := json.Marshal(v)
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		want := slices.Sorted(slices.Values(append(slices.Clone(connectionMembers), "catalogPending", "warnings")))
		if k := sortedKeys(m); !slices.Equal(k, want) {
			t.Errorf("%s: members %v, want %v", tt.role, k, want)
		}
		if m["url"] != tt.url || strings.Contains(string(raw), "hdr-secret") {
			t.Errorf("%s: url %v, answer %s", tt.role, m["url"], raw)
		}
	}
	if out.Connection.URL != keyedURL {
		t.Error("builtinOutcome changed the outcome's row")
	}
}

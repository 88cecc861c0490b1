package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentpack/gateway/functions/mcp/gateway/audit"
	"github.com/agentpack/gateway/functions/mcp/gateway/metrics"
	"github.com/agentpack/gateway/functions/mcp/gateway/request"
	"github.com/agentpack/gateway/functions/mcp/gateway/wire"
	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/dbtest"
	"github.com/google/uuid"
)

// TestSetCall runs the built-in dispatch on its own (a per-test database, no HTTP, no
// go-sdk): the access check before argument parsing, schema validation, a read-only tool
// answered and not audited, a failed write not audited, one metrics line per call, and
// the request state required.
func TestSetCall(t *testing.T) {
	t.Parallel()
	pool, _ := dbtest.Fresh(t)
	ctx := context.Background()
	ws := uuid.NewString()
	if err := db.WorkspaceUpsert(ctx, pool, ws, "layer"); err != nil {
		t.Fatal(err)
	}
	if err := db.CatalogEntryUpsertSeed(ctx, pool, &db.CatalogSeedEntry{Name: "Asana", URL: "https://asana.example/mcp",
		TransportType: "streamable-http", VerificationTier: "unverified"}); err != nil {
		t.Fatal(err)
	}
	var lines bytes.Buffer
	s, err := New(Services{Pool: pool, Audit: audit.New(pool), Metrics: metrics.New(&lines)})
	if err != nil {
		t.Fatal(err)
	}
	snap := &catalog.Snapshot{Doc: &catalog.Document{}}
	member := &auth.Principal{Subject: "m", Role: auth.RoleMember, Workspaces: []string{ws}}
	admin := &auth.Principal{Subject: "a", Role: auth.RoleAdmin, Workspaces: []string{ws}}
	call := func(p *auth.Principal, tool, args string) wire.Envelope {
		t.Helper()
		st := &request.State{Principal: p, Workspace: ws, Snapshot: snap, RequestID: "req-" + tool}
		res, err := s.Call(request.With(ctx, st), s.Lookup(tool), json.RawMessage(args))
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		var env wire.Envelope
		if err := json.Unmarshal(res.StructuredContent.(json.RawMessage), &env); err != nil || env.OK == res.IsError {
			t.Fatalf("%s: envelope %s (isError %v)", tool, res.StructuredContent, res.IsError)
		}
		if err := s.Lookup(tool).ValidateOutput(res.StructuredContent.(json.RawMessage)); err != nil {
			t.Errorf("%v", err)
		}
		return env
	}
	cases := []struct {
		name string
		p    *auth.Principal
		tool string
		args string
		code apperr.Code // "" = ok
	}{
		// The access check runs first: these arguments are invalid too.
		{"member calls an admin-only tool", member, "agentpack_audit_list", `{"limit":"x"}`, apperr.Forbidden},
		{"schema violation", member, "agentpack_catalog_list", `{"limit":"ten"}`, apperr.Validation},
		{"format uuid asserted", admin, "agentpack_catalog_uninstall", `{"entryId":"not-a-uuid"}`, apperr.Validation},
		{"read-only tool", member, "agentpack_toolsets_list", `{}`, ""},
		{"catalog list", member, "agentpack_catalog_list", `{"limit":3}`, ""},
		{"catalog get", member, "agentpack_catalog_get", `{"name":"Asana"}`, ""},
		{"tools search", member, "agentpack_tools_search", `{"query":"catalog"}`, ""},
		{"audit list", admin, "agentpack_audit_list", `{}`, ""},
		{"write without a connection service", admin, "agentpack_catalog_uninstall", `{"entryId":"` + uuid.NewString() + `"}`, apperr.Unavailable},
	}
	for _, c := range cases {
		env := call(c.p, c.tool, c.args)
		if c.code == "" && !env.OK || c.code != "" && (env.Error == nil || env.Error.Code != c.code) {
			t.Errorf("%s: envelope %+v %+v", c.name, env, env.Error)
		}
		if env.Meta.Tool != c.tool {
			t.Errorf("%s: meta %+v", c.name, env.Meta)
		}
	}
	if evs, err := db.AuditEventList(ctx, pool, ws, 10); err != nil || len(evs) != 0 {
		t.Errorf("audit rows %v (%v): a read or a failed call wrote one", evs, err)
	}
	if n := strings.Count(lines.String(), "\n"); n != len(cases) {
		t.Errorf("%d metrics lines for %d calls", n, len(cases))
	}
	if _, err := s.Call(ctx, s.Lookup("agentpack_toolsets_list"), nil); err == nil {
		t.Error("a call without request state ran")
	}
}

// TestIntegerArguments: a limit a client sends is applied (found with the MCP Inspector:
// the schema decoder yields json.Number, which the handlers read as "absent", so every
// limit fell back to its default).
func TestIntegerArguments(t *testing.T) {
	t.Parallel()
	pool, _ := dbtest.Fresh(t)
	ctx := context.Background()
	ws := uuid.NewString()
	if err := db.WorkspaceUpsert(ctx, pool, ws, "limits"); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"One", "Two", "Three"} {
		if err := db.CatalogEntryUpsertSeed(ctx, pool, &db.CatalogSeedEntry{Name: n, URL: "https://" + n + ".example/mcp",
			TransportType: "streamable-http", VerificationTier: "unverified"}); err != nil {
			t.Fatal(err)
		}
	}
	s, err := New(Services{Pool: pool, Audit: audit.New(pool)})
	if err != nil {
		t.Fatal(err)
	}
	st := &request.State{Principal: &auth.Principal{Subject: "m", Role: auth.RoleMember, Workspaces: []string{ws}},
		Workspace: ws, Snapshot: &catalog.Snapshot{Doc: &catalog.Document{}}}
	res, err := s.Call(request.With(ctx, st), s.Lookup("agentpack_catalog_list"), json.RawMessage(`{"limit":2}`))
	if err != nil {
		t.Fatal(err)
	}
	var env struct {
		Data struct {
			Entries []json.RawMessage
			Total   int
		}
	}
	if err := json.Unmarshal(res.StructuredContent.(json.RawMessage), &env); err != nil {
		t.Fatal(err)
	}
	if len(env.Data.Entries) != 2 || env.Data.Total < 3 {
		t.Fatalf("limit 2: %d entries of %d", len(env.Data.Entries), env.Data.Total)
	}
	for _, c := range []struct {
		args map[string]any
		want int
	}{
		{map[string]any{"limit": json.Number("7")}, 7},
		{map[string]any{"limit": float64(3)}, 3},
		{map[string]any{}, 50},
		{map[string]any{"limit": json.Number("1e400")}, 50},
	} {
		if got := intArg(c.args, "limit", 50); got != c.want {
			t.Errorf("intArg(%v) = %d, want %d", c.args, got, c.want)
		}
	}
}

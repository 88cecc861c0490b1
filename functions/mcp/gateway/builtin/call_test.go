package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"slices"
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
	"github.com/agentpack/gateway/shared/services"
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
	s, err := New(Options{Pool: pool, Services: services.NewServices(pool, nil, nil, nil), Audit: audit.New(pool), Metrics: metrics.New(&lines)})
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
	s, err := New(Options{Pool: pool, Services: services.NewServices(pool, nil, nil, nil), Audit: audit.New(pool)})
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
}

// TestArgumentStructsMatchSchemas: every built-in's argument struct (Typed) has exactly
// one field per property of its input schema, under the property's JSON name, of a type
// the property's JSON type decodes into; a misspelt tag (the way an argument gets silently
// ignored) or a property without a field fails here.
func TestArgumentStructsMatchSchemas(t *testing.T) {
	s, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string][]reflect.Kind{
		"string":  {reflect.String},
		"integer": {reflect.Int, reflect.Int64},
		"object":  {reflect.Map, reflect.Slice}, // map[string]string, json.RawMessage
	}
	for _, b := range s.All() {
		var schema struct {
			Properties map[string]struct {
				Type string `json:"type"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(b.InputSchema(), &schema); err != nil {
			t.Fatalf("%s: %v", b.Name, err)
		}
		at := b.Handler.args
		if at == nil || at.Kind() != reflect.Struct {
			t.Errorf("%s: handler arguments are %v, want a struct (Typed)", b.Name, at)
			continue
		}
		fields := map[string]reflect.Type{}
		for f := range at.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			fields[name] = f.Type
		}
		for prop, p := range schema.Properties {
			ft, ok := fields[prop]
			if !ok {
				t.Errorf("%s: schema property %q has no field in %v", b.Name, prop, at)
				continue
			}
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if want := kinds[p.Type]; want != nil && !slices.Contains(want, ft.Kind()) {
				t.Errorf("%s: %q is a %s in the schema but a %v in %v", b.Name, prop, p.Type, ft, at)
			}
		}
		for name := range fields {
			if _, ok := schema.Properties[name]; !ok {
				t.Errorf("%s: field %q of %v is not a property of the input schema", b.Name, name, at)
			}
		}
	}
}

// TestTypedDecodesValidatedArguments: Typed hands the handler the decoded struct (an
// integer as an int, absence as the zero value) and a declaration the schema allows but
// the struct cannot hold is an error, not a silently dropped argument.
func TestTypedDecodesValidatedArguments(t *testing.T) {
	type args struct {
		Limit int     `json:"limit"`
		Name  *string `json:"name"`
	}
	var got args
	h := Typed(func(_ context.Context, _ *Call, in args) (any, error) { got = in; return nil, nil })
	if _, err := h.run(context.Background(), &Call{}, json.RawMessage(`{"limit":7}`)); err != nil || got.Limit != 7 || got.Name != nil {
		t.Fatalf("got %+v, %v", got, err)
	}
	if _, err := h.run(context.Background(), &Call{}, json.RawMessage(`{"limit":"seven"}`)); err == nil {
		t.Fatal("a string decoded into an int field")
	}
}

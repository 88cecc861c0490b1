package policy

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/gateway/shared/catalog"
)

func testSchema() *Schema {
	doc := &catalog.Document{Connections: []catalog.Connection{{ID: "c1", Handle: "gh", Tools: []catalog.Tool{
		{ExposedName: "mcp_gh_create_issue", UpstreamName: "create_issue",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"project":{"type":"string"},"title":{"type":"string"}}}`)},
		{ExposedName: "mcp_gh_delete_repo", UpstreamName: "delete_repo",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"repo":{"type":"string"}}}`)},
	}}}}
	return SchemaFor(doc)
}

// TestParseErrorPosition: a syntax error names the line and column the parser stopped at.
func TestParseErrorPosition(t *testing.T) {
	_, err := Parse("permit(principal, action, resource);\n\nforbid(principal, action, resource)\n  when { context.chat == };")
	var inv *InvalidError
	if !errors.As(err, &inv) || inv.Problems[0].Line != 4 || inv.Problems[0].Column < 10 {
		t.Fatalf("err = %#v", err)
	}
	if _, err := Parse("@id(\"a\") permit(principal, action, resource);\n@id(\"a\") forbid(principal, action, resource);"); !errors.As(err, &inv) || inv.Problems[0].Line != 2 {
		t.Fatalf("duplicate id: %v", err)
	}
}

// TestValidateNames: typos in tool, connection, argument, attribute, action and role names are
// problems at their place; the correct names pass.
func TestValidateNames(t *testing.T) {
	sch := testSchema()
	good := `@id("base") permit(principal, action, resource);
@id("x") forbid(principal in Role::"member", action == Action::"call", resource == Tool::"mcp_gh_create_issue")
  unless { context.arguments has project && ["alpha"].contains(context.arguments.project) };
forbid(principal, action, resource in Connection::"gh") when { resource.destructive && context.time.hour < 9 };
forbid(principal, action, resource) when { resource.upstreamName == "delete_repo" && principal.groups.contains("x") };
forbid(principal, action, resource == Builtin::"agentpack_registry_import");`
	if _, err := Check(good, sch); err != nil {
		t.Fatalf("valid document refused: %v", err)
	}
	cases := []struct {
		name, text, want string
		line             int
	}{
		{"tool", "permit(principal, action, resource);\nforbid(principal, action, resource == Tool::\"mcp_gh_create_isue\");", "unknown tool", 2},
		{"upstream name as tool", "forbid(principal, action, resource == Tool::\"create_issue\");", "its exposed name is", 1},
		{"argument", "forbid(principal, action, resource == Tool::\"mcp_gh_create_issue\")\n when { context.arguments.projct == \"a\" };", "unknown argument \"projct\"", 2},
		{"argument of another tool", "forbid(principal, action, resource == Tool::\"mcp_gh_create_issue\")\n when { context.arguments has repo };", "unknown argument \"repo\"", 2},
		{"connection", "forbid(principal, action, resource in Connection::\"gitlab\");", "unknown connection", 1},
		{"action", "forbid(principal, action == Action::\"invoke\", resource);", "unknown action", 1},
		{"role", "forbid(principal in Role::\"owner\", action, resource);", "unknown role", 1},
		{"attribute", "forbid(principal, action, resource) when { resource.dangerous };", "unknown resource attribute", 1},
		{"context", "forbid(principal, action, resource) when { context.time.day == 1 };", "unknown context.time attribute", 1},
		{"builtin", "forbid(principal, action, resource == Builtin::\"agentpack_catalog_lst\");", "unknown built-in", 1},
		{"upstreamName literal", "forbid(principal, action, resource) when { resource.upstreamName == \"delete_rep\" };", "upstream name", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Check(c.text, sch)
			var inv *InvalidError
			if !errors.As(err, &inv) {
				t.Fatalf("accepted: %v", err)
			}
			p := inv.Problems[0]
			if !strings.Contains(p.Message, c.want) || p.Line != c.line || p.Column < 1 {
				t.Fatalf("problem = %+v, want %q at line %d", p, c.want, c.line)
			}
		})
	}
	// The global document checks types and attributes, not this workspace's names.
	if _, err := Check("forbid(principal, action, resource == Tool::\"anything\");", GlobalSchema()); err != nil {
		t.Fatalf("global: %v", err)
	}
}

// TestDecide: forbid wins and is named, no permit denies, an empty engine allows, the global
// document is asked first, and arguments, groups and time reach the policies.
func TestDecide(t *testing.T) {
	ws, err := Check(`@id("base") permit(principal, action, resource);
@id("members-read-only") forbid(principal in Role::"member", action == Action::"call", resource) unless { resource.readOnly };
@id("alpha-only") forbid(principal, action == Action::"call", resource == Tool::"mcp_gh_create_issue")
  unless { context.arguments has project && ["alpha"].contains(context.arguments.project) };
@id("eng-night") forbid(principal in Group::"eng", action, resource) when { context.time.hour >= 22 };`, testSchema())
	if err != nil {
		t.Fatal(err)
	}
	e := &Engine{Workspace: ws}
	member := Principal{Subject: "m", Role: "member", Workspace: "w"}
	admin := Principal{Subject: "a", Role: "admin", Workspace: "w", Groups: []string{"eng"}}
	tool := Resource{Type: TypeTool, Name: "mcp_gh_create_issue", UpstreamName: "create_issue", Connection: "gh"}
	noon := time.Date(2026, 1, 5, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name string
		req  Request
		ok   bool
		ids  string
	}{
		{"member write", Request{Principal: member, Action: ActionCall, Resource: tool, Arguments: json.RawMessage(`{"project":"alpha"}`), Time: noon}, false, "members-read-only"},
		{"member list", Request{Principal: member, Action: ActionList, Resource: tool, Time: noon}, true, "base"},
		{"admin alpha", Request{Principal: admin, Action: ActionCall, Resource: tool, Arguments: json.RawMessage(`{"project":"alpha","n":1.5,"x":null}`), Time: noon}, true, "base"},
		{"admin beta", Request{Principal: admin, Action: ActionCall, Resource: tool, Arguments: json.RawMessage(`{"project":"beta"}`), Time: noon}, false, "alpha-only"},
		{"admin no project", Request{Principal: admin, Action: ActionCall, Resource: tool, Time: noon}, false, "alpha-only"},
		{"eng at night", Request{Principal: admin, Action: ActionList, Resource: tool, Time: noon.Add(11 * time.Hour)}, false, "eng-night"},
	}
	for _, c := range cases {
		d := e.Decide(&c.req)
		if d.Allowed != c.ok || strings.Join(d.PolicyIDs, ",") != c.ids {
			t.Errorf("%s: %+v, want allowed=%v ids=%s", c.name, d, c.ok, c.ids)
		}
	}
	if d := (&Engine{}).Decide(&cases[0].req); !d.Allowed || d.Reason != "no_policies" {
		t.Errorf("empty engine: %+v", d)
	}
	onlyForbid, _ := Parse(`forbid(principal, action, resource) when { resource.destructive };`)
	if d := (&Engine{Workspace: onlyForbid}).Decide(&cases[1].req); d.Allowed || d.Reason != "no_permit" {
		t.Errorf("no permit: %+v", d)
	}
	global, _ := Parse(`@id("no-import") forbid(principal, action, resource == Builtin::"agentpack_registry_import");
permit(principal, action, resource);`)
	imp := Request{Principal: admin, Action: ActionCall, Resource: Resource{Type: TypeBuiltin, Name: "agentpack_registry_import"}, Time: noon}
	if d := (&Engine{Global: global, Workspace: ws}).Decide(&imp); d.Allowed || d.Document != "global" || d.PolicyIDs[0] != "global/no-import" {
		t.Errorf("global first: %+v", d)
	}
}

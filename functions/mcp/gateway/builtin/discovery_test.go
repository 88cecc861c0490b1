package builtin

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/agentpack/gateway/functions/mcp/gateway/request"
	"github.com/agentpack/gateway/functions/mcp/gateway/wire"
	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/catalog"
)

// TestToolsSearchAnswers: each hit names its server (source and connection handle), the
// fields the query matched and its input schema; connection narrows the search to one
// server (by name or handle, or agentpack for the built-ins); a search that finds nothing
// lists the servers the caller can search; an unknown connection, or a connection the
// request may not see, is a validation error that lists them; a project connection
// outside the request's project is never found.
func TestToolsSearchAnswers(t *testing.T) {
	t.Parallel()
	s := testSet(t)
	schema := func(props string) json.RawMessage {
		return json.RawMessage(`{"type":"object","properties":{` + props + `}}`)
	}
	doc := &catalog.Document{Connections: []catalog.Connection{
		{ID: "c1", Name: "GitHub", Handle: "github", Scope: "workspace", Tools: []catalog.Tool{
			{ExposedName: "mcp_github_create_issue", UpstreamName: "create_issue", Description: "Create a new issue in a GitHub repository.",
				InputSchema: schema(`"repo":{"type":"string","description":"owner/name"},"title":{"type":"string"}`)},
			{ExposedName: "mcp_github_list_commits", UpstreamName: "list_commits", Description: "List the commits of a branch.",
				InputSchema: schema(`"repo":{"type":"string"}`)},
		}},
		{ID: "c2", Name: "GitLab", Handle: "gitlab", Scope: "workspace", Tools: []catalog.Tool{
			{ExposedName: "mcp_gitlab_create_issue", UpstreamName: "create_issue", Description: "Create a new issue in a GitLab project.",
				InputSchema: schema(`"project_id":{"type":"string"}`)},
		}},
		{ID: "c3", Name: "Secret project", Handle: "secretproj", Scope: "project", ProjectID: "p-other", Tools: []catalog.Tool{
			{ExposedName: "mcp_secretproj_create_issue", UpstreamName: "create_issue", Description: "Create an issue.",
				InputSchema: schema(`"x":{"type":"string"}`)},
		}},
	}}
	snap := &catalog.Snapshot{Doc: doc}
	member := &auth.Principal{Subject: "m", Role: auth.RoleMember, Workspaces: []string{"ws"}}
	search := func(args string) (wire.Envelope, map[string]any) {
		t.Helper()
		st := &request.State{Principal: member, Workspace: "ws", Snapshot: snap, RequestID: "r"}
		res, err := s.Call(request.With(context.Background(), st), s.Lookup(SearchToolName), json.RawMessage(args))
		if err != nil {
			t.Fatal(err)
		}
		raw := res.StructuredContent.(json.RawMessage)
		if err := s.Lookup(SearchToolName).ValidateOutput(raw); err != nil {
			t.Errorf("%s: %v", args, err)
		}
		var env wire.Envelope
		if err := json.Unmarshal(raw, &env); err != nil {
			t.Fatal(err)
		}
		data, _ := env.Data.(map[string]any)
		return env, data
	}
	names := func(data map[string]any) []string {
		var out []string
		for _, h := range data["tools"].([]any) {
			out = append(out, h.(map[string]any)["name"].(string))
		}
		return out
	}

	// A hit: server, matched fields, schema; the project connection never shows.
	_, data := search(`{"query":"open a new issue"}`)
	got := names(data)
	if len(got) < 2 || !slices.Contains(got[:2], "mcp_github_create_issue") || !slices.Contains(got[:2], "mcp_gitlab_create_issue") ||
		slices.Contains(got, "mcp_secretproj_create_issue") {
		t.Fatalf("hits: %v", got)
	}
	hit := data["tools"].([]any)[0].(map[string]any)
	if hit["source"] == "" || hit["connection"] == "" || hit["inputSchema"].(map[string]any)["type"] != "object" ||
		!slices.Contains(hit["matched"].([]any), any("name")) {
		t.Errorf("hit: %v", hit)
	}

	// The connection filter, by handle and by name (any case), and the built-ins.
	for _, conn := range []string{"gitlab", "GitLab"} {
		if _, data := search(`{"query":"create issue","connection":"` + conn + `"}`); !slices.Equal(names(data), []string{"mcp_gitlab_create_issue"}) {
			t.Errorf("connection %s: %v", conn, names(data))
		}
	}
	if _, data := search(`{"query":"search tools","connection":"agentpack"}`); len(names(data)) == 0 ||
		slices.ContainsFunc(names(data), func(n string) bool { return !strings.HasPrefix(n, "agentpack_") }) {
		t.Errorf("connection agentpack: %v", names(data))
	}

	// Nothing matches: the servers, with handles and tool counts, and a hint.
	_, data = search(`{"query":"zzzqqq xyzzy"}`)
	if data["total"].(float64) != 0 || len(data["tools"].([]any)) != 0 || !strings.Contains(data["hint"].(string), "GitLab") {
		t.Fatalf("no match: %v", data)
	}
	var servers []string
	for _, sv := range data["servers"].([]any) {
		servers = append(servers, sv.(map[string]any)["connection"].(string))
	}
	if !slices.Equal(servers, []string{"agentpack", "github", "gitlab"}) {
		t.Errorf("servers: %v", servers)
	}

	// An unknown connection, or one outside the request's project: a validation error
	// naming the servers that exist.
	for _, conn := range []string{"jira", "secretproj"} {
		env, _ := search(`{"query":"create issue","connection":"` + conn + `"}`)
		if env.OK || env.Error == nil || env.Error.Code != apperr.Validation || !strings.Contains(env.Error.Hint, "github") ||
			strings.Contains(env.Error.Hint, "secretproj") {
			t.Errorf("connection %s: %+v", conn, env.Error)
		}
	}
	// Bad input: a connection that is not a string.
	if env, _ := search(`{"query":"x","connection":5}`); env.OK || env.Error.Code != apperr.Validation {
		t.Errorf("connection 5: %+v", env)
	}
}

package gateway_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/db"
	"github.com/google/go-cmp/cmp"
)

// listNames serves tools/list (every page) and returns the tool names.
func listNames(t *testing.T, h http.Handler, rq request) []string {
	t.Helper()
	var names []string
	cursor := ""
	for {
		rq.body = `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":` + mustJSON(cursor) + `}}`
		if cursor == "" {
			rq.body = `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
		}
		var res struct {
			Tools      []struct{ Name string }
			NextCursor string
		}
		if err := json.Unmarshal(rq.check(t, h), &res); err != nil {
			t.Fatal(err)
		}
		for _, tl := range res.Tools {
			names = append(names, tl.Name)
		}
		if cursor = res.NextCursor; cursor == "" {
			return names
		}
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func callBody(name string, args any) string {
	return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":` + mustJSON(name) + `,"arguments":` + mustJSON(args) + `}}`
}

// serveRaw serves rq and returns the status and the whole body.
func serveRaw(h http.Handler, rq request) (int, string) {
	w := &discardWriter{h: http.Header{}, keep: true}
	rq.serve(h, w)
	return w.status, string(w.body)
}

// TestProgressiveDiscovery: above the workspace's threshold tools/list offers the built-ins
// (with the search and call-by-name tools) instead of every proxied tool; the client can ask
// for either mode; the search ranks the tool the query names first, with its input schema;
// and agentpack_tool_call is the direct call — same answer bytes, same audit row, same
// refusals.
func TestProgressiveDiscovery(t *testing.T) {
	c := newChurnEnv(t, 0)
	echo := "mcp_" + c.base.Connections[0].Handle + "_echo"
	put := func(extra int, threshold *int) {
		t.Helper()
		doc := c.base
		doc.DiscoveryThreshold = threshold
		doc.GeneratedAt = time.Now().UTC()
		doc.Connections = append(append([]catalog.Connection(nil), c.base.Connections...), scaleConnections(extra, 20)...)
		b, _ := json.Marshal(doc)
		if _, err := putDoc(c.store, b); err != nil {
			t.Fatal(err)
		}
		c.cache.Invalidate(c.ws)
	}
	hasProxied := func(names []string) bool {
		return slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "mcp_") })
	}
	with := func(path string, hdr map[string]string) request {
		rq := c.list
		rq.path, rq.hdr = path, hdr
		return rq
	}
	base := "/mcp/" + c.ws

	// Small workspace: every tool listed; discovery on request.
	put(0, nil)
	if names := listNames(t, c.handler, with(base, nil)); !slices.Contains(names, echo) {
		t.Fatalf("small workspace: %s not listed: %v", echo, names)
	}
	for _, rq := range []request{with(base+"?discovery=search", nil), with(base, map[string]string{"X-MCP-Discovery": "search"})} {
		names := listNames(t, c.handler, rq)
		if hasProxied(names) || !slices.Contains(names, "agentpack_tools_search") || !slices.Contains(names, "agentpack_tool_call") {
			t.Errorf("%s %v: discovery asked for, got %v", rq.path, rq.hdr, names)
		}
	}
	if st, body := serveRaw(c.handler, with(base+"?discovery=everything", nil)); st != http.StatusBadRequest || !strings.Contains(body, "discovery") {
		t.Errorf("unknown mode: %d %s", st, body)
	}

	// 10 servers × 20 tools + the echo server: above the default 200.
	put(10, nil)
	if names := listNames(t, c.handler, with(base, nil)); hasProxied(names) {
		t.Errorf("201 tools: proxied tools listed above the default threshold: %d names", len(names))
	}
	if names := listNames(t, c.handler, with(base+"?discovery=all", nil)); len(names) < 201 || !slices.Contains(names, echo) {
		t.Errorf("discovery=all: %d names", len(names))
	}
	// The workspace's own threshold.
	big := 1000
	put(10, &big)
	if names := listNames(t, c.handler, with(base, nil)); !slices.Contains(names, echo) {
		t.Errorf("threshold 1000: %s not listed", echo)
	}
	zero := 0
	put(0, &zero)
	if names := listNames(t, c.handler, with(base, nil)); hasProxied(names) {
		t.Errorf("threshold 0: proxied tools listed")
	}

	// Search finds the one echo among 1,000 servers × 20 tools, with its schema.
	put(1000, nil)
	rq := c.list
	rq.body = callBody("agentpack_tools_search", map[string]any{"query": "echo back the message", "limit": 3})
	var env struct {
		StructuredContent struct {
			OK   bool
			Data struct {
				Tools []struct {
					Name, Kind  string
					InputSchema map[string]any
				}
				Total int
			}
		}
	}
	if err := json.Unmarshal(rq.check(t, c.handler), &env); err != nil {
		t.Fatal(err)
	}
	hits := env.StructuredContent.Data.Tools
	if len(hits) == 0 || hits[0].Name != echo || hits[0].Kind != "proxied" || hits[0].InputSchema["type"] != "object" {
		t.Fatalf("search: %+v", env.StructuredContent)
	}

	// Call by name = the direct call: the same result, one audit row each naming the tool.
	direct := c.list
	direct.body = callBody(echo, map[string]any{"message": "hi"})
	byName := c.list
	byName.body = callBody("agentpack_tool_call", map[string]any{"name": echo, "arguments": map[string]any{"message": "hi"}})
	want, got := direct.check(t, c.handler), byName.check(t, c.handler)
	if d := cmp.Diff(string(want), string(got)); d != "" {
		t.Errorf("agentpack_tool_call answer differs from the direct call's (-direct +byName):\n%s", d)
	}
	if err := c.g.FlushAudit(t.Context()); err != nil {
		t.Fatal(err)
	}
	rows, err := db.AuditEventList(context.Background(), c.pool, c.ws, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Tool != echo || rows[1].Tool != echo || rows[0].Kind != "proxied" {
		t.Errorf("audit rows: %+v", rows)
	}

	// Refusals are the direct call's: a member calling an admin-only built-in, an unknown
	// tool; and a call naming itself is refused.
	member, err := auth.Mint(benchSecret, auth.Principal{Subject: "m", Role: auth.RoleMember, Workspaces: []string{c.ws}}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, token string
		target      string
		args        map[string]any
	}{
		{"admin-only built-in as a member", member, "agentpack_audit_list", map[string]any{}},
		{"unknown tool", c.list.token, "mcp_nope_nothing", map[string]any{}},
		{"bad arguments for the target", c.list.token, echo, map[string]any{"message": 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, b := c.list, c.list
			d.token, b.token = tc.token, tc.token
			d.body = callBody(tc.target, tc.args)
			b.body = callBody("agentpack_tool_call", map[string]any{"name": tc.target, "arguments": tc.args})
			ds, dbody := serveRaw(c.handler, d)
			bs, bbody := serveRaw(c.handler, b)
			if ds != bs || scrubIDs(dbody) != scrubIDs(bbody) {
				t.Errorf("direct %d %s\nby name %d %s", ds, dbody, bs, bbody)
			}
		})
	}
	self := c.list
	self.body = callBody("agentpack_tool_call", map[string]any{"name": "agentpack_tool_call"})
	if _, body := serveRaw(c.handler, self); !strings.Contains(body, "cannot call itself") {
		t.Errorf("self call: %s", body)
	}
}

// scrubIDs blanks the per-answer error ids so that two refusals compare.
func scrubIDs(s string) string {
	var m any
	if json.Unmarshal([]byte(s), &m) != nil {
		return s
	}
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if k == "errorId" {
					x[k] = "-"
				} else {
					x[k] = walk(e)
				}
			}
		case []any:
			for i := range x {
				x[i] = walk(x[i])
			}
		case string:
			if strings.HasPrefix(x, "{") {
				return scrubIDs(x)
			}
		}
		return v
	}
	b, _ := json.Marshal(walk(m))
	return string(b)
}

package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/functions/mcp/gateway"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/testpeer"
	"github.com/google/go-cmp/cmp"
)

// errorIDs matches the random error ids of gateway-side failures (in the envelope's text,
// escaped, and in structuredContent / JSON-RPC error data).
var errorIDs = regexp.MustCompile(`(errorId\\?"\s*:\s*\\?")[A-Za-z0-9_-]+`)

// TestToolsCallFastPath is the differential test of the tools/call fast path (call.go):
// each request is sent once with its length hidden (go-sdk serves it: the reference) and
// once plainly (the fast path, when eligible), and the two answers must be byte-identical
// — status, headers but Date and X-Request-Id, body — and write the same audit rows. The
// only normalised bytes are the random errorId of a gateway-side failure.
func TestToolsCallFastPath(t *testing.T) {
	env := stacktest.New(t, nil)
	ws, proj, _ := env.Workspace(t, "Fast")
	admin := stacktest.Token(t, "alice", auth.RoleAdmin, ws)
	member := stacktest.Token(t, "mallory", auth.RoleMember, ws)
	up := testpeer.NewFixture(t, nil)
	down := testpeer.NewFixture(t, nil)
	create := func(name, url string, extra map[string]any) (id, handle string) {
		body := map[string]any{"name": name, "url": url, "workspaceId": ws}
		for k, v := range extra {
			body[k] = v
		}
		status, out := env.Do(t, "POST", "/api/mcp-connections", admin, body)
		if status != http.StatusCreated {
			t.Fatalf("create %s: %d %s", name, status, out)
		}
		var c struct{ ID, Handle string }
		_ = json.Unmarshal(out, &c)
		return c.ID, c.Handle
	}
	demoID, demo := create("Demo", up.URL, nil)
	_, hidden := create("Hidden", up.URL, map[string]any{"projectId": proj})
	_, gone := create("Gone", down.URL, nil)
	down.Close()                 // gateway-side failure: UPSTREAM_UNAVAILABLE envelope
	up.Server.RemoveTools("add") // the upstream answers -32602 unknown tool for mcp_demo_add
	agg, single := "/mcp/"+ws, "/mcp/"+ws+"/servers/"+demoID

	post := func(t *testing.T, path, token, body string, hdr map[string]string, hideLength bool) (int, http.Header, []byte) {
		t.Helper()
		var rd io.Reader = strings.NewReader(body)
		if hideLength {
			rd = chunked{strings.NewReader(body)}
		}
		req, _ := http.NewRequest(http.MethodPost, env.URL+path, rd)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		resp.Header.Del("Date")
		resp.Header.Del("X-Request-Id")
		return resp.StatusCode, resp.Header, errorIDs.ReplaceAll(b, []byte("${1}ID"))
	}
	lastID := func() (n int64) {
		_ = env.Pool.QueryRow(context.Background(), `SELECT coalesce(max(id), 0) FROM audit_events`).Scan(&n)
		return n
	}
	rowsAfter := func(t *testing.T, id int64) []string {
		t.Helper()
		rows, err := env.Pool.Query(context.Background(), `SELECT concat_ws('|', principal, workspace_id, tool, version,
			kind, connection_id, args_digest) FROM audit_events WHERE id > $1 ORDER BY id`, id)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var s string
			_ = rows.Scan(&s)
			out = append(out, s)
		}
		return out
	}
	call := func(name, args string) string {
		if args == "" {
			return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + name + `"}}`
		}
		return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args + `}}`
	}
	// One go-sdk answer per server and header combination approves the fast path.
	for _, w := range []struct{ path, token string }{{agg, admin}, {agg, member}, {single, admin}, {single, member}} {
		post(t, w.path, w.token, call("mcp_"+demo+"_echo", `{"message":"warm"}`), nil, false)
		if w.path == single {
			post(t, w.path, w.token, call("echo", `{"message":"warm"}`), nil, false)
		}
	}

	for _, tc := range []struct {
		name, path, token, body string
		hdr                     map[string]string
		fast                    bool
		rows                    int
	}{
		{"success admin", agg, admin, call("mcp_"+demo+"_echo", ` { "message" : "héllo <b>&</b>" } `), nil, true, 1},
		{"success member", agg, member, call("mcp_"+demo+"_echo", `{"message":"hi"}`), nil, true, 1},
		{"string id", agg, admin, strings.Replace(call("mcp_"+demo+"_echo", `{"message":"x"}`), `"id":7`, `"id":"req-7"`, 1), nil, true, 1},
		{"no arguments", agg, admin, call("mcp_"+demo+"_echo", ""), nil, true, 0},
		{"upstream tool error (isError)", agg, admin, call("mcp_"+demo+"_fail", `{"message":"boom"}`), nil, true, 0},
		{"upstream JSON-RPC error", agg, admin, call("mcp_"+demo+"_add", `{"a":1,"b":2}`), nil, true, 0},
		{"bad args for the upstream schema", agg, member, call("mcp_"+demo+"_echo", `{"message":5}`), nil, true, 0},
		{"gateway-side failure (envelope)", agg, admin, call("mcp_"+gone+"_echo", `{"message":"x"}`), nil, true, 0},
		{"single server", single, admin, call("echo", `{"message":"single"}`), nil, true, 1},
		{"single server, member", single, member, call("fail", `{}`), nil, true, 0},
		{"unknown tool", agg, admin, call("mcp_nope_echo", `{}`), nil, false, 0},
		{"hidden tool (project-scoped, no project)", agg, admin, call("mcp_"+hidden+"_echo", `{"message":"x"}`), nil, false, 0},
		{"hidden tool visible with its project", agg, admin, call("mcp_"+hidden+"_echo", `{"message":"x"}`), map[string]string{"X-Project-Id": proj}, false, 1},
		{"member calls admin-only built-in", agg, member, call("agentpack_catalog_install", `{"entryId":"x"}`), nil, false, 0},
		{"built-in", agg, admin, call("agentpack_toolsets_list", `{}`), nil, false, 0},
		{"arguments not an object", agg, admin, call("mcp_"+demo+"_echo", `"x"`), nil, false, 0},
		{"_meta", agg, admin, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"_meta":{"progressToken":1},"name":"mcp_` + demo + `_echo","arguments":{"message":"x"}}}`, nil, false, 1},
		{"Mcp-Method header", agg, admin, call("mcp_"+demo+"_echo", `{"message":"x"}`), map[string]string{"Mcp-Method": "tools/list"}, false, 1},
		{"duplicate key", agg, admin, `{"jsonrpc":"2.0","id":7,"id":8,"method":"tools/call","params":{"name":"mcp_` + demo + `_echo"}}`, nil, false, 0},
		{"unapproved version", agg, admin, call("mcp_"+demo+"_echo", `{"message":"x"}`), map[string]string{"Mcp-Protocol-Version": "2025-06-18"}, false, 1},
		{"approved version", agg, admin, call("mcp_"+demo+"_echo", `{"message":"y"}`), map[string]string{"Mcp-Protocol-Version": "2025-06-18"}, true, 1},
		{"bad accept", agg, admin, call("mcp_"+demo+"_echo", `{"message":"x"}`), map[string]string{"Accept": "application/json"}, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id0 := lastID()
			wantStatus, wantHdr, want := post(t, tc.path, tc.token, tc.body, tc.hdr, true)
			id1 := lastID()
			fast0 := gateway.FastCalls()
			gotStatus, gotHdr, got := post(t, tc.path, tc.token, tc.body, tc.hdr, false)
			if n := gateway.FastCalls() - fast0; (n == 1) != tc.fast {
				t.Errorf("fast path taken %d times, want fast=%v", n, tc.fast)
			}
			if gotStatus != wantStatus || !bytes.Equal(got, want) {
				t.Fatalf("answer differs from go-sdk's:\n go-sdk %d %s\n   fast %d %s", wantStatus, want, gotStatus, got)
			}
			if d := cmp.Diff(wantHdr, gotHdr); d != "" {
				t.Fatalf("headers differ (-sdk +fast):\n%s", d)
			}
			wantRows, gotRows := rowsAfter(t, id0)[:int(id1-id0)], rowsAfter(t, id1)
			if len(wantRows) != tc.rows {
				t.Errorf("go-sdk wrote %d audit rows, want %d", len(wantRows), tc.rows)
			}
			if d := cmp.Diff(wantRows, gotRows); d != "" {
				t.Fatalf("audit rows differ (-sdk +fast):\n%s", d)
			}
			t.Logf("%d %s", gotStatus, got)
		})
	}
}

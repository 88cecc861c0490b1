package gateway_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/google/go-cmp/cmp"
)

// chunked hides the body length, which makes the gateway hand the request to go-sdk
// untouched (no replay): the reference answer.
type chunked struct{ r io.Reader }

func (c chunked) Read(p []byte) (int, error) { return c.r.Read(p) }

// TestToolsListReplay checks that a replayed tools/list answer is byte for byte what go-sdk
// answers (headers too, but the request id), for both roles and a toolset filter, and that
// non-plain requests and refused headers still get go-sdk's own answer.
func TestToolsListReplay(t *testing.T) {
	env := stacktest.New(t, nil)
	ws, _, _ := env.Workspace(t, "Replay")
	admin := stacktest.Token(t, "alice", auth.RoleAdmin, ws)
	member := stacktest.Token(t, "mallory", auth.RoleMember, ws)

	post := func(t *testing.T, token, body string, hdr map[string]string, hideLength bool) (*http.Response, []byte) {
		t.Helper()
		var rd io.Reader = strings.NewReader(body)
		if hideLength {
			rd = chunked{strings.NewReader(body)}
		}
		req, _ := http.NewRequest(http.MethodPost, env.URL+"/mcp/"+ws, rd)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		for k, v := range hdr {
			if v == "" {
				req.Header.Del(k)
			} else {
				req.Header.Set(k, v)
			}
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		resp.Header.Del("Date")
		resp.Header.Del("X-Request-Id")
		return resp, b
	}

	for _, tc := range []struct {
		name  string
		token string
		hdr   map[string]string
	}{
		{"admin", admin, nil},
		{"member", member, nil},
		{"toolsets", admin, map[string]string{"X-MCP-Toolsets": "catalog"}},
		{"older version", admin, map[string]string{"Mcp-Protocol-Version": "2025-06-18"}},
		{"no version header", member, map[string]string{"Mcp-Protocol-Version": ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for i, id := range []string{`1`, `"abc-1"`, `42`, `7`} {
				body := `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/list"}`
				if i == 3 {
					body = `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{}}`
				}
				wantResp, want := post(t, tc.token, body, tc.hdr, true)
				gotResp, got := post(t, tc.token, body, tc.hdr, false)
				if wantResp.StatusCode != 200 || gotResp.StatusCode != 200 {
					t.Fatalf("status %d / %d: %s", wantResp.StatusCode, gotResp.StatusCode, got)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("id %s: replayed answer differs from go-sdk's:\n%s", id, cmp.Diff(string(want), string(got)))
				}
				if d := cmp.Diff(wantResp.Header, gotResp.Header); d != "" {
					t.Fatalf("id %s: headers differ (-sdk +replay):\n%s", id, d)
				}
			}
		})
	}

	// Refusals are never replayed, even after the same server answered a plain tools/list.
	for _, tc := range []struct {
		name   string
		hdr    map[string]string
		body   string
		status int
	}{
		{"bad accept", map[string]string{"Accept": "application/json"}, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, 400},
		{"bad content type", map[string]string{"Content-Type": "text/plain"}, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, 415},
		{"bad version", map[string]string{"Mcp-Protocol-Version": "1999-01-01"}, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, 400},
		{"case-folded key", nil, `{"jsonrpc":"2.0","id":1,"Method":"tools/list"}`, 0},
		{"cursor", nil, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"bogus"}}`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantResp, want := post(t, admin, tc.body, tc.hdr, true)
			gotResp, got := post(t, admin, tc.body, tc.hdr, false)
			if tc.status != 0 && gotResp.StatusCode != tc.status {
				t.Errorf("status %d, want %d: %s", gotResp.StatusCode, tc.status, got)
			}
			if gotResp.StatusCode != wantResp.StatusCode || !bytes.Equal(got, want) {
				t.Fatalf("answer differs from go-sdk's: %d %s / %d %s", gotResp.StatusCode, got, wantResp.StatusCode, want)
			}
		})
	}
}

package stack_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"testing"

	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/testpeer"
	"github.com/agentpack/gateway/shared/upstreamauth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestAuthorizationInputRequired is "this caller must authorize" at 2026-07-28 through the
// gateway (MCP 2026-07-28 multi round-trip requests and URL-mode elicitation): a member of
// an oauth_per_user connection without a grant calls a tool and gets an
// InputRequiredResult whose one input request is a URL-mode elicitation/create and whose
// requestState is the gateway's, sealed; nothing is forwarded. Then, with the same state:
//   - a retry before consent is answered with the next InputRequiredResult (a new state);
//   - the state presented by another member, for other arguments, for another tool, or
//     altered, is refused with -32602 (MRTR: state failing verification MUST be rejected);
//   - a retry saying the user declined gets an isError result, not a new prompt;
//   - a 2026-07-28 client that did not declare URL elicitation gets the text answer, and a
//     2025-11-25 client -32042 (per-revision answers);
//   - after the member's consent the retry completes the call upstream as the member's
//     own account.
func TestAuthorizationInputRequired(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	a := w.ws["A"]
	up := testpeer.NewOAuthUpstream(t)
	st, e := w.do(t, "POST", "/api/mcp-marketplace", w.su, map[string]any{
		"name": "Per user MRTR", "url": up.MCPURL(), "transportType": "streamable-http", "category": "testing"})
	mustStatus(t, "create entry", st, http.StatusCreated, e)
	st, inst := w.do(t, "POST", "/api/mcp-marketplace/"+e["id"].(string)+"/install", a.admin,
		map[string]any{"workspaceId": a.id, "authMode": "oauth_per_user"})
	mustStatus(t, "install", st, http.StatusCreated, inst)
	if code, _ := browserGet(t, consentURL(t, authURLOf(t, "install", inst), "carol", a.admin), ""); code != http.StatusOK {
		t.Fatal("admin consent failed")
	}
	whoami := "mcp_" + inst["handle"].(string) + "_whoami"
	member := stacktest.Token(t, "member-mrtr", auth.RoleMember, a.id)
	other := stacktest.Token(t, "member-other", auth.RoleMember, a.id)
	urlCaps := `{"elicitation":{"url":{}}}`

	// send is a tools/call of tool at version with extra params members (JSON, after
	// "arguments"), and client capabilities caps at 2026-07-28.
	send := func(t *testing.T, token, version, tool, args, extra, caps string) map[string]any {
		t.Helper()
		hdr := map[string]string{"Mcp-Protocol-Version": version}
		meta := ""
		if version >= "2026-07-28" {
			hdr["Mcp-Method"], hdr["Mcp-Name"] = "tools/call", tool
			meta = `,"_meta":{"io.modelcontextprotocol/protocolVersion":"` + version + `","io.modelcontextprotocol/clientCapabilities":` + caps + `}`
		}
		body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + extra + meta + `}}`
		_, raw := w.env.RPC(t, "/mcp/"+a.id, token, body, hdr)
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("not JSON: %s", raw)
		}
		return m
	}
	// inputRequired checks m is the gateway's InputRequiredResult and returns its URL and state.
	inputRequired := func(t *testing.T, what string, m map[string]any) (url, state string) {
		t.Helper()
		r, _ := m["result"].(map[string]any)
		reqs, _ := r["inputRequests"].(map[string]any)
		ir, _ := reqs[upstreamauth.InputKey].(map[string]any)
		p, _ := ir["params"].(map[string]any)
		url, _ = p["url"].(string)
		state, _ = r["requestState"].(string)
		if r["resultType"] != "input_required" || len(reqs) != 1 || ir["method"] != "elicitation/create" || p["mode"] != "url" ||
			!strings.Contains(url, "/admin/#/consent/") || !strings.Contains(fmt.Sprint(p["message"]), "Per user MRTR") ||
			p["elicitationId"] != nil || !upstreamauth.IsGatewayState(state) || r["content"] != nil {
			t.Fatalf("%s: want the gateway's InputRequiredResult, got %v", what, m)
		}
		return url, state
	}
	rpcCode := func(m map[string]any) any {
		e, _ := m["error"].(map[string]any)
		return e["code"]
	}
	retryOf := func(state, responses string) string {
		return `,"inputResponses":` + responses + `,"requestState":"` + state + `"`
	}
	accept := `{"agentpack_authorize":{"action":"accept"}}`

	_, _, before := up.Counts()
	_, state := inputRequired(t, "first call", send(t, member, "2026-07-28", whoami, `{}`, "", urlCaps))

	url2, state2 := inputRequired(t, "retry before consent", send(t, member, "2026-07-28", whoami, `{ }`, retryOf(state, accept), urlCaps))
	if state2 == state {
		t.Error("the next InputRequiredResult reuses the state")
	}
	for name, m := range map[string]map[string]any{
		"another member":  send(t, other, "2026-07-28", whoami, `{}`, retryOf(state, accept), urlCaps),
		"other arguments": send(t, member, "2026-07-28", whoami, `{"x":1}`, retryOf(state, accept), urlCaps),
		"altered":         send(t, member, "2026-07-28", whoami, `{}`, retryOf(state[:len(state)-3]+"AAA", accept), urlCaps),
	} {
		if rpcCode(m) != float64(-32602) || !strings.Contains(fmt.Sprint(m["error"]), "requestState failed verification") {
			t.Errorf("%s: %v, want -32602 requestState failed verification", name, m)
		}
	}
	if m := send(t, member, "2026-07-28", whoami, `{}`, retryOf(state, `{"agentpack_authorize":{"action":"decline"}}`), urlCaps); outcome(m) != "upstream-error" ||
		!strings.Contains(fmt.Sprint(m["result"]), "declined") {
		t.Errorf("declined: %v", m)
	}
	if m := send(t, member, "2026-07-28", whoami, `{}`, "", `{"elicitation":{}}`); outcome(m) != "upstream-error" ||
		!strings.Contains(fmt.Sprint(m["result"]), "/admin/#/consent/") || m["result"].(map[string]any)["inputRequests"] != nil {
		t.Errorf("2026-07-28 without URL elicitation: %v", m)
	}
	if m := send(t, member, "2025-11-25", whoami, `{}`, "", ""); rpcCode(m) != float64(-32042) {
		t.Errorf("2025-11-25: %v", m)
	}
	if _, _, after := up.Counts(); !maps.Equal(after, before) {
		t.Errorf("the upstream saw calls before consent: %v → %v", before, after)
	}

	// Each unauthorized call replaced the member's pending authorization (one link per
	// member and connection), so url2 is spent: the retry with state2 answers the next
	// InputRequiredResult with the current link.
	if code, _, _ := consentPage(t, url2, member); code != http.StatusNotFound {
		t.Errorf("a replaced link: consent page %d, want 404", code)
	}
	url3, state3 := inputRequired(t, "retry after other calls", send(t, member, "2026-07-28", whoami, `{}`, retryOf(state2, accept), urlCaps))
	// The member consents (in their browser) on the link of the latest answer; the retry with
	// that answer's state completes the call as the member's own account.
	if code, page := browserGet(t, consentURL(t, url3, "dave", member), member); code != http.StatusOK {
		t.Fatalf("member consent: %d %s", code, page)
	}
	m := send(t, member, "2026-07-28", whoami, `{}`, retryOf(state3, accept), urlCaps)
	if outcome(m) != "ok" || !strings.Contains(fmt.Sprint(m["result"]), "dave") || m["result"].(map[string]any)["resultType"] != "complete" {
		t.Fatalf("retry after consent: %v", m)
	}

	// go-sdk's client (v1.8.0, 2026-07-28, its multi round-trip middleware) drives the
	// same flow by itself: its URL elicitation handler "opens" the link (the member's
	// consent in the browser) and accepts, the middleware retries with the requestState,
	// and the call completes as the member's account.
	t.Run("go-sdk client", func(t *testing.T) {
		token := stacktest.Token(t, "member-gosdk", auth.RoleMember, a.id)
		var elicited []string
		c := mcp.NewClient(&mcp.Implementation{Name: "mrtr-test", Version: "1"}, &mcp.ClientOptions{
			Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
			ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				elicited = append(elicited, req.Params.Mode)
				if req.Params.Mode != "url" {
					return &mcp.ElicitResult{Action: "decline"}, nil
				}
				if code, page := browserGet(t, consentURL(t, req.Params.URL, "erin", token), token); code != http.StatusOK {
					t.Errorf("consent: %d %s", code, page)
				}
				return &mcp.ElicitResult{Action: "accept"}, nil
			},
		})
		tr := &mcp.StreamableClientTransport{Endpoint: w.env.URL + "/mcp/" + a.id, DisableStandaloneSSE: true,
			HTTPClient: &http.Client{Transport: bearerRT{token: token}}}
		cs, err := c.Connect(t.Context(), tr, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: whoami, Arguments: map[string]any{}})
		if err != nil {
			t.Fatal(err)
		}
		if len(elicited) != 1 || elicited[0] != "url" || res.IsError || len(res.Content) == 0 ||
			res.Content[0].(*mcp.TextContent).Text != "erin" {
			t.Errorf("elicited %v, result %+v", elicited, res)
		}
	})
}

// bearerRT sends every request with a bearer token.
type bearerRT struct{ token string }

func (rt bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+rt.token)
	return http.DefaultTransport.RoundTrip(r)
}

package stack_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/agentpack/gateway/shared/demoupstream"
	"github.com/agentpack/gateway/shared/seed"
	"github.com/agentpack/gateway/shared/testpeer"
	"github.com/agentpack/gateway/shared/upstreamauth"
)

// TestLocalOAuthDemo walks the OAuth demo that `make run` serves (demoupstream.Protected:
// the mockoidc authorization server and the demo MCP server behind bearer checks, seeded by
// seed.LoadOAuthDemo as an oauth_per_user entry with its pre-registered client): the admin
// installs the seeded entry and consents; a member's first call answers the authorization
// (-32042 with their consent link, nothing forwarded); the member passes the consent page,
// the authorization server approves its demo user at once, the callback stores the token;
// the member's next call reaches the protected server with that token (whoami answers the
// demo user), and the member's own state (GET /api/mcp-connections/authorizations) reads
// authorized, where it read required before; another workspace's list is 404. The entry's
// authorization (GET …/{id}/auth) shows its client without the secret, to superusers only.
func TestLocalOAuthDemo(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	a := w.ws["A"]
	p, err := demoupstream.StartProtected("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	entry, err := seed.LoadOAuthDemo(t.Context(), w.env.Pool, p.MCPURL(), &upstreamauth.Client{
		ClientID: demoupstream.ProtectedClientID, ClientSecret: p.ClientSecret(),
		TokenEndpointAuth: upstreamauth.AuthClientSecretPost, Issuer: p.Issuer()}, w.env.Deps.Connections.AuthClientPut)
	if err != nil {
		t.Fatal(err)
	}
	// The entry's authorization as the catalog editor reads it: the secret never leaves.
	st, ea := w.do(t, "GET", "/api/mcp-marketplace/"+entry+"/auth", w.su, nil)
	mustStatus(t, "entry auth", st, http.StatusOK, ea)
	if cl, _ := ea["client"].(map[string]any); ea["authMode"] != "oauth_per_user" || cl["clientId"] != demoupstream.ProtectedClientID ||
		cl["hasSecret"] != true || strings.Contains(fmt.Sprint(ea), p.ClientSecret()) {
		t.Errorf("entry auth: %v", ea)
	}
	if st, b := w.do(t, "GET", "/api/mcp-marketplace/"+entry+"/auth", a.admin, nil); st != http.StatusForbidden {
		t.Errorf("an admin read the entry's authorization: %d %v", st, b)
	}
	if st, b := w.do(t, "GET", "/api/mcp-marketplace/00000000-0000-4000-8000-000000000000/auth", w.su, nil); st != http.StatusNotFound {
		t.Errorf("unknown entry: %d %v", st, b)
	}
	st, inst := w.do(t, "POST", "/api/mcp-marketplace/"+entry+"/install", a.admin, map[string]any{"workspaceId": a.id})
	mustStatus(t, "install", st, http.StatusCreated, inst)
	if inst["authMode"] != "oauth_per_user" {
		t.Fatalf("authMode = %v", inst["authMode"])
	}
	conn, handle := inst["id"].(string), inst["handle"].(string)
	if code, page := browserGet(t, consentURL(t, authURLOf(t, "install", inst), "", a.admin), ""); code != http.StatusOK || !strings.Contains(page, `data-status="authorized"`) {
		t.Fatalf("admin consent: %d %s", code, page)
	}
	// The member's own state before consent: required, and they may start it.
	mine := func(want string) {
		t.Helper()
		st, b := w.do(t, "GET", "/api/mcp-connections/authorizations?workspaceId="+a.id, a.member, nil)
		mustStatus(t, "my authorizations", st, http.StatusOK, b)
		list, _ := b["authorizations"].([]any)
		if len(list) != 1 {
			t.Fatalf("authorizations: %v", b)
		}
		it := list[0].(map[string]any)
		az, _ := it["authorization"].(map[string]any)
		if it["connectionId"] != conn || it["canAuthorize"] != true || az["mode"] != "oauth_per_user" || az["authorization"] != want {
			t.Errorf("member's authorization, want %s: %v", want, it)
		}
		if want == "authorized" && az["authorizedBy"] != "member-A" {
			t.Errorf("authorizedBy = %v", az["authorizedBy"])
		}
	}
	mine("required")
	if st, b := w.do(t, "GET", "/api/mcp-connections/authorizations?workspaceId="+w.ws["B"].id, a.member, nil); st != http.StatusNotFound {
		t.Errorf("another workspace's authorizations: %d %v", st, b)
	}
	whoami := "mcp_" + handle + "_whoami"
	v25 := map[string]string{"Mcp-Protocol-Version": "2025-11-25"}

	// The member has not consented: the answer is the way to do it, bound to them.
	_, m, _ := w.call(t, "/mcp/"+a.id, a.member, whoami, map[string]any{}, v25)
	e, _ := m["error"].(map[string]any)
	if e == nil || e["code"] != float64(-32042) {
		t.Fatalf("member before consent: %v", m)
	}
	els, _ := e["data"].(map[string]any)["elicitations"].([]any)
	if len(els) != 1 {
		t.Fatalf("elicitations: %v", e["data"])
	}
	link, _ := els[0].(map[string]any)["url"].(string)
	if !strings.Contains(link, "/admin/#/consent/") {
		t.Fatalf("link %q", link)
	}
	// Someone else (the admin) cannot pass the member's link.
	if st, _, _ := consentPage(t, link, a.admin); st != http.StatusForbidden {
		t.Errorf("the admin passed the member's consent link: %d", st)
	}
	st, asURL, body := consentPage(t, link, a.member)
	if st != http.StatusOK || !strings.HasPrefix(asURL, p.Issuer()+"/authorize?") {
		t.Fatalf("consent page: %d %s %v", st, asURL, body)
	}
	loc, err := testpeer.Consent(t.Context(), asURL, "")
	if err != nil {
		t.Fatal(err)
	}
	if code, page := browserGet(t, loc.String(), ""); code != http.StatusOK || !strings.Contains(page, `data-status="authorized"`) {
		t.Fatalf("member callback: %d %s", code, page)
	}
	_, m, out := w.call(t, "/mcp/"+a.id, a.member, whoami, map[string]any{}, v25)
	if out != "ok" || !strings.Contains(fmt.Sprint(m["result"]), "signed in upstream as 1234567890") {
		t.Errorf("member after consent: %s %v", out, m)
	}
	mine("authorized")
}

package stack_test

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/gateway/shared/db"
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
	p, err := demoupstream.StartProtected("127.0.0.1:0", nil)
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

// TestLocalOAuthDemoRestart is issue 34's first-hour item: a restart of make run's OAuth
// demo between a member's consent and their next call.
//
//   - With its state file (make run's .state/oauth-demo.json), the restarted authorization
//     server keeps its signing key, client secret and sessions: the member's next whoami
//     reaches the protected server with the grant given before the restart.
//   - Without it (the state lost: a new key, no sessions), the upstream refuses the stored
//     token with 401 and the refresh is refused too: the member's very first call answers
//     -32042 with their consent link (2025-11-25) — never UPSTREAM_ERROR about headers —
//     and the grant reads "expired" at once; an older client gets the link in an isError
//     result. Consenting again makes the next call succeed.
func TestLocalOAuthDemoRestart(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	a := w.ws["A"]
	stateFile := filepath.Join(t.TempDir(), "oauth-demo.json")
	start := func(addr, file string) *demoupstream.Protected {
		t.Helper()
		var p *demoupstream.Protected
		var err error
		// The port was just closed by the previous server: retry the bind briefly.
		for i := 0; i < 50; i++ {
			if p, err = demoupstream.StartProtected(addr, &demoupstream.ProtectedOptions{StateFile: file}); err == nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = p.Close() })
		// make run seeds the entry's client at every start (the secret may be new).
		if _, err := seed.LoadOAuthDemo(t.Context(), w.env.Pool, p.MCPURL(), &upstreamauth.Client{
			ClientID: demoupstream.ProtectedClientID, ClientSecret: p.ClientSecret(),
			TokenEndpointAuth: upstreamauth.AuthClientSecretPost, Issuer: p.Issuer()}, w.env.Deps.Connections.AuthClientPut); err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := start("127.0.0.1:0", stateFile)
	addr := strings.TrimPrefix(p.URL(), "http://")
	entry, err := db.CatalogEntryGetByName(t.Context(), w.env.Pool, seed.OAuthDemoName)
	if err != nil {
		t.Fatal(err)
	}
	st, inst := w.do(t, "POST", "/api/mcp-marketplace/"+entry.ID+"/install", a.admin, map[string]any{"workspaceId": a.id})
	mustStatus(t, "install", st, http.StatusCreated, inst)
	// The admin consents on install (their token lists the tools), as the console does.
	if code, page := browserGet(t, consentURL(t, authURLOf(t, "install", inst), "", a.admin), ""); code != http.StatusOK || !strings.Contains(page, `data-status="authorized"`) {
		t.Fatalf("admin consent: %d %s", code, page)
	}
	whoami := "mcp_" + inst["handle"].(string) + "_whoami"
	v25 := map[string]string{"Mcp-Protocol-Version": "2025-11-25"}
	consent := func(p *demoupstream.Protected, link string) {
		t.Helper()
		st, asURL, body := consentPage(t, link, a.member)
		if st != http.StatusOK || !strings.HasPrefix(asURL, p.Issuer()+"/authorize?") {
			t.Fatalf("consent page: %d %s %v", st, asURL, body)
		}
		loc, err := testpeer.Consent(t.Context(), asURL, "")
		if err != nil {
			t.Fatal(err)
		}
		// The callback page names the connection and the account that consented.
		if code, page := browserGet(t, loc.String(), ""); code != http.StatusOK || !strings.Contains(page, `data-status="authorized"`) ||
			!strings.Contains(page, `data-connection="`+seed.OAuthDemoName+`"`) || !strings.Contains(page, `data-account="member-A"`) ||
			!strings.Contains(page, "<strong>"+seed.OAuthDemoName+"</strong> is authorized for member-A") {
			t.Fatalf("member callback: %d %s", code, page)
		}
	}
	linkOf := func(what string, m map[string]any) string {
		t.Helper()
		e, _ := m["error"].(map[string]any)
		if e == nil || e["code"] != float64(-32042) {
			t.Fatalf("%s: want -32042, got %v", what, m)
		}
		els, _ := e["data"].(map[string]any)["elicitations"].([]any)
		if len(els) != 1 {
			t.Fatalf("%s: elicitations %v", what, e["data"])
		}
		link, _ := els[0].(map[string]any)["url"].(string)
		if !strings.Contains(link, "/admin/#/consent/") || strings.Contains(fmt.Sprint(m), "headers") {
			t.Fatalf("%s: link %q in %v", what, link, m)
		}
		return link
	}
	state := func() map[string]any {
		t.Helper()
		st, b := w.do(t, "GET", "/api/mcp-connections/authorizations?workspaceId="+a.id, a.member, nil)
		mustStatus(t, "authorizations", st, http.StatusOK, b)
		list, _ := b["authorizations"].([]any)
		if len(list) != 1 {
			t.Fatalf("authorizations: %v", b)
		}
		az, _ := list[0].(map[string]any)["authorization"].(map[string]any)
		return az
	}
	_, m, _ := w.call(t, "/mcp/"+a.id, a.member, whoami, map[string]any{}, v25)
	consent(p, linkOf("before consent", m))
	if _, m, out := w.call(t, "/mcp/"+a.id, a.member, whoami, map[string]any{}, v25); out != "ok" {
		t.Fatalf("after consent: %s %v", out, m)
	}

	// Restart with the state file: the grant survives.
	_ = p.Close()
	p = start(addr, stateFile)
	if _, m, out := w.call(t, "/mcp/"+a.id, a.member, whoami, map[string]any{}, v25); out != "ok" ||
		!strings.Contains(fmt.Sprint(m["result"]), "signed in upstream as 1234567890") {
		t.Fatalf("after a restart with the state file: %s %v", out, m)
	}

	// Restart without it: the first call answers the consent link, and the grant is expired.
	_ = p.Close()
	p = start(addr, "")
	if az := state(); az["authorization"] != "authorized" {
		t.Fatalf("before the refused call: %v", az)
	}
	_, m, _ = w.call(t, "/mcp/"+a.id, a.member, whoami, map[string]any{}, v25)
	linkOf("first call after a restart without state", m)
	if az := state(); az["authorization"] != "expired" || !strings.Contains(fmt.Sprint(az["reason"]), "refus") {
		t.Errorf("after the refused call: %v", az)
	}
	// An older client gets the link in an isError result (no -32042 before 2025-11-25).
	_, old, _ := w.call(t, "/mcp/"+a.id, a.member, whoami, map[string]any{}, map[string]string{"Mcp-Protocol-Version": "2025-06-18"})
	if r, _ := old["result"].(map[string]any); r == nil || r["isError"] != true || !strings.Contains(fmt.Sprint(r["content"]), "/admin/#/consent/") {
		t.Errorf("2025-06-18 after the restart: %v", old)
	}
	_, m, _ = w.call(t, "/mcp/"+a.id, a.member, whoami, map[string]any{}, v25) // the newest link
	consent(p, linkOf("again", m))
	if _, m, out := w.call(t, "/mcp/"+a.id, a.member, whoami, map[string]any{}, v25); out != "ok" {
		t.Fatalf("after consenting again: %s %v", out, m)
	}
	if az := state(); az["authorization"] != "authorized" {
		t.Errorf("after consenting again: %v", az)
	}
}

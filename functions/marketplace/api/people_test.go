package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/db"
)

// TestPeopleByEmail (issue 44): where the API names a person by their token subject (a
// person id of the gateway's authorization server, or a development sign-in's subject) it
// also gives their email: GET /api/me, and the Usage per principal (label, JSON and CSV),
// joined in the same statement; an unknown subject gets none.
func TestPeopleByEmail(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	ctx := t.Context()
	ann, err := db.PersonUpsert(ctx, w.env.Pool, &db.Person{Issuer: "https://idp.example", Subject: "ann-at-idp", Email: "ann@example.com", Name: "Ann"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.PersonUpsert(ctx, w.env.Pool, &db.Person{Issuer: db.DevSignInIssuer, Subject: "dev-admin", Name: "Development admin"}); err != nil {
		t.Fatal(err)
	}
	annTok := stacktest.Token(t, ann.ID, auth.RoleAdmin, w.wsA)
	devTok := stacktest.Token(t, "dev-admin", auth.RoleAdmin, w.wsA)
	for _, c := range []struct{ token, subject, email, name string }{
		{annTok, ann.ID, "ann@example.com", "Ann"},
		{devTok, "dev-admin", "", "Development admin"},
		{w.adminA, "alice", "", ""},
	} {
		st, b := w.do(t, "GET", "/api/me", c.token, nil)
		want(t, "me "+c.subject, st, http.StatusOK, b)
		if b["subject"] != c.subject || b["role"] != "admin" || str(b["email"]) != c.email || str(b["name"]) != c.name {
			t.Errorf("me %s: %v, want email %q name %q", c.subject, b, c.email, c.name)
		}
	}
	if st, b := w.do(t, "GET", "/api/me", "", nil); st != http.StatusUnauthorized {
		t.Errorf("me without a token: %d %v", st, b)
	}

	st, b := w.do(t, "POST", "/api/mcp-connections", w.adminA, map[string]any{"workspaceId": w.wsA, "name": "Echo", "url": fixture(t).URL})
	want(t, "create", st, http.StatusCreated, b)
	tool := "mcp_" + b["handle"].(string) + "_echo"
	for _, tok := range []string{annTok, devTok, w.adminA} {
		resp, raw := w.env.RPC(t, "/mcp/"+w.wsA, tok, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+tool+`","arguments":{"message":"hi"}}}`, nil)
		if resp.StatusCode != 200 || !strings.Contains(string(raw), `"result"`) {
			t.Fatalf("call: %d %s", resp.StatusCode, raw)
		}
	}
	w.env.FlushAudit(t)
	st, b = w.do(t, "GET", "/api/usage?workspaceId="+w.wsA+"&by=principal", w.adminA, nil)
	want(t, "usage", st, http.StatusOK, b)
	labels := map[string]string{}
	for _, r := range asSlice(b["rows"]) {
		m := asMap(r)
		labels[m["key"].(string)] = str(m["label"])
	}
	if labels[ann.ID] != "ann@example.com" || labels["dev-admin"] != "Development admin" || labels["alice"] != "" || len(labels) != 3 {
		t.Errorf("usage labels %v, want ann's email, the dev admin's name and none for alice", labels)
	}
	status, csv := w.env.Do(t, "GET", "/api/usage?workspaceId="+w.wsA+"&by=principal&format=csv", w.adminA, nil)
	if status != 200 || !strings.HasPrefix(string(csv), "principal,calls,errors,p50_ms,p95_ms,label\n") || !strings.Contains(string(csv), ann.ID+",1,0,") || !strings.Contains(string(csv), ",ann@example.com\n") {
		t.Errorf("csv: %d %s", status, csv)
	}
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

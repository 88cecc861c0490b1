package stack_test

import (
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/testpeer"
)

// TestNoSecretsInLogsOrAudit (issue 7 "Audit integrity"): a header value planted in every
// connection, the bearer tokens of every principal and a secret tool argument never appear
// in a captured log line (debug level), an audit or event row, a catalog document or a
// REST answer — after successful calls, refused ones and failing upstreams alike. Every
// successful proxied call has its audit row. (UPDATE/DELETE/TRUNCATE on the audit tables
// are refused by the database: shared/db TestAuditTablesAreAppendOnly.) Upstream OAuth
// tokens of an authorized, refreshed connection are checked the same way (issue 12).
func TestNoSecretsInLogsOrAudit(t *testing.T) {
	w := newWorld(t, nil)
	const argSecret = "arg-secret-51e0d2"
	a, b := w.ws["A"], w.ws["B"]
	calls := 0
	for _, tok := range []string{a.member, a.admin, w.su} {
		if st, _, out := w.call(t, "/mcp/"+a.id, tok, "mcp_"+a.handle+"_echo", map[string]any{"message": argSecret}, map[string]string{"X-Chat-Id": a.chat}); st != 200 || out != "ok" {
			t.Fatalf("echo: %d %s", st, out)
		}
		calls++
	}
	// Refusals and failures log too.
	w.rpc(t, "/mcp/"+b.id, a.admin, "tools/list", nil, nil)
	w.call(t, "/mcp/"+a.id, a.member, "agentpack_connection_test", map[string]any{"connectionId": a.conn}, nil)
	w.call(t, "/mcp/"+a.id, a.admin, "agentpack_connection_test", map[string]any{"connectionId": a.conn}, nil)
	w.env.RPC(t, "/mcp/"+a.id, a.admin+"x", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, nil)
	w.env.Do(t, "GET", "/api/mcp-connections/"+b.conn, a.admin+"tampered", nil)
	w.fx.SetStatus("POST", http.StatusUnauthorized)
	w.call(t, "/mcp/"+a.id, a.admin, "mcp_"+a.handle+"_echo", map[string]any{"message": argSecret}, nil)
	w.do(t, "POST", "/api/mcp-connections/"+a.conn+"/test", a.admin, nil)
	w.do(t, "POST", "/api/mcp-connections/"+a.conn+"/refresh", a.admin, nil)
	w.fx.SetStatus("POST", 0)

	// Upstream OAuth (issue 12): a connection authorized by consent, tested (token used),
	// expired and refreshed; its tokens and the DCR client secret are secrets too.
	up := testpeer.NewOAuthUpstream(t)
	st, e := w.do(t, "POST", "/api/mcp-marketplace", w.su, map[string]any{"name": "Protected", "url": up.MCPURL(), "category": "testing"})
	mustStatus(t, "create oauth entry", st, http.StatusCreated, e)
	st, inst := w.do(t, "POST", "/api/mcp-marketplace/"+e["id"].(string)+"/install", a.admin, map[string]any{"workspaceId": a.id, "authMode": "oauth"})
	mustStatus(t, "install oauth entry", st, http.StatusCreated, inst)
	if code, page := browserGet(t, consentURL(t, authURLOf(t, "install", inst), "alice"), ""); code != http.StatusOK {
		t.Fatalf("oauth callback: %d %s", code, page)
	}
	upstreamTokens := up.Issued() // before the refresh rotates the refresh token away
	up.ExpireAll()
	w.do(t, "POST", "/api/mcp-connections/"+inst["id"].(string)+"/test", a.admin, nil)
	upstreamTokens = append(upstreamTokens, up.Issued()...)
	refreshes, _, _ := up.Counts()
	if refreshes != 1 || len(upstreamTokens) < 5 {
		t.Fatalf("upstream issued %d tokens, %d refreshes", len(upstreamTokens), refreshes)
	}

	secrets := map[string]string{"header value": secretHeader, "tool argument": argSecret}
	for i, tok := range upstreamTokens {
		secrets[fmt.Sprintf("upstream OAuth token %d", i)] = tok
	}
	for name, tok := range map[string]string{"member A": a.member, "admin A": a.admin, "member B": b.member, "admin B": b.admin, "superuser": w.su} {
		secrets[name+" token"] = tok
		// The signature alone is enough to matter.
		secrets[name+" token signature"] = tok[strings.LastIndex(tok, ".")+1:]
	}
	check := func(where, text string) {
		t.Helper()
		for what, s := range secrets {
			if what == "tool argument" && where == "logs" {
				continue // arguments are the caller's data, not a credential; the audit must not hold them
			}
			if strings.Contains(text, s) {
				t.Errorf("%s contain the %s", where, what)
			}
		}
	}
	logs := w.env.Logs.String()
	if !strings.Contains(logs, "proxied call failed") && !strings.Contains(logs, `"level":"WARN"`) {
		t.Errorf("the logs do not show the failures: is the log captured? %.300s", logs)
	}
	check("logs", logs)
	check("metrics", w.env.Metrics.String())
	var rows string
	if err := w.env.Pool.QueryRow(t.Context(), `SELECT coalesce((SELECT string_agg(row_to_json(a)::text, E'\n') FROM audit_events a), '') || E'\n' ||
		coalesce((SELECT string_agg(row_to_json(e)::text, E'\n') FROM event_log e), '')`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	check("audit and event rows", rows)
	if n := w.count(t, `SELECT count(*) FROM audit_events WHERE kind = 'proxied' AND workspace_id = $1`, a.id); n != calls {
		t.Errorf("%d audit rows for %d successful proxied calls", n, calls)
	}
	dir := w.env.Deps.Store.(*catalog.DiskStore).Dir
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			data, _ := os.ReadFile(p)
			check("catalog document "+d.Name(), string(data))
		}
		return nil
	})
	for _, p := range []string{"/api/mcp-connections/" + inst["id"].(string), "/api/mcp-connections/statuses?workspaceId=" + a.id,
		"/api/mcp-connections/" + a.conn, "/api/mcp-connections?workspaceId=" + a.id, "/api/mcp-connections/" + a.conn + "/tools",
		"/api/chats/" + a.chat + "/tools", "/api/mcp-marketplace/" + w.entry} {
		_, raw := w.env.Do(t, "GET", p, a.admin, nil)
		check("GET "+p, string(raw))
	}
	_, m := w.rpc(t, "/mcp/"+a.id, a.admin, "tools/call", map[string]any{"name": "agentpack_audit_list", "arguments": map[string]any{}}, nil)
	_, m2 := w.rpc(t, "/mcp/"+a.id, a.admin, "tools/call", map[string]any{"name": "agentpack_connections_list", "arguments": map[string]any{}}, nil)
	_, m3 := w.rpc(t, "/mcp/"+a.id, a.admin, "resources/read", map[string]any{"uri": "agentpack://catalog"}, nil)
	for _, x := range []map[string]any{m, m2, m3} {
		if x["result"] == nil {
			t.Errorf("gateway read failed: %v", x)
		}
		check("gateway answer", fmt.Sprint(x))
	}
}

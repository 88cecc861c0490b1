package stack_test

import (
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/gateway/functions/healthcheck/health"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/telemetry"
	"github.com/agentpack/gateway/shared/testpeer"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// TestNoSecretsInLogsOrAudit (issue 7 "Audit integrity"; issue 17): a header value planted
// in every connection, the bearer tokens of every principal and a secret tool argument
// never appear in a captured log line (debug level, access lines included), a trace span's
// name or attributes, an audit or event row, a catalog document or a REST answer — after successful calls, refused ones and failing upstreams alike. Every
// successful proxied call has its audit row. (UPDATE/DELETE/TRUNCATE on the audit tables
// are refused by the database: shared/db TestAuditTablesAreAppendOnly.) Upstream OAuth
// tokens of an authorized, refreshed connection are checked the same way (issue 12).
func TestNoSecretsInLogsOrAudit(t *testing.T) {
	// Trace everything this test does (not parallel: the tracer is process-wide).
	spans := tracetest.NewSpanRecorder()
	t.Cleanup(telemetry.Use(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))))
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
	if code, page := browserGet(t, consentURL(t, authURLOf(t, "install", inst), "alice", a.admin), ""); code != http.StatusOK {
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

	// Issue 14 item 7: an API key in the upstream URL's query (and fragment). One
	// connection works (its key reaches the upstream), one points at a closed port (the
	// connect failure is logged, recorded in last_error, tested), and a catalog entry with a
	// keyed URL is installed and health-checked.
	const querySecret, deadSecret, userSecret, fragSecret = "qs-live-4b1d9e", "qs-dead-90ac2f", "qs-sess-5e7d", "frag-key-c3a1"
	keyed := w.fx.URL + "?api_key=" + querySecret + "#" + fragSecret
	st, qb := w.do(t, "POST", "/api/mcp-connections", a.admin, map[string]any{"name": "Keyed", "url": keyed,
		"transportType": "streamable-http", "workspaceId": a.id})
	mustStatus(t, "create keyed connection", st, http.StatusCreated, qb)
	qconn, qhandle := qb["id"].(string), qb["handle"].(string)
	if st, _, out := w.call(t, "/mcp/"+a.id, a.admin, "mcp_"+qhandle+"_echo", map[string]any{"message": "hi"}, nil); st != 200 || out != "ok" {
		t.Fatalf("echo through the keyed connection: %d %s", st, out)
	}
	calls++
	if n := w.fx.CountRequests("", ""); n == 0 {
		t.Fatal("the fixture saw no request")
	}
	// (userinfo is refused on write by the URL guard, so it cannot be planted here.)
	dead := "http://127.0.0.1:1/mcp?api_key=" + deadSecret + "&session=" + userSecret
	st, db := w.do(t, "POST", "/api/mcp-connections", a.admin, map[string]any{"name": "Dead keyed", "url": dead,
		"transportType": "streamable-http", "workspaceId": a.id})
	mustStatus(t, "create dead keyed connection", st, http.StatusCreated, db)
	dconn := db["id"].(string)
	w.do(t, "POST", "/api/mcp-connections/"+dconn+"/test", a.admin, nil)
	w.call(t, "/mcp/"+a.id, a.admin, "agentpack_connection_test", map[string]any{"connectionId": dconn}, nil)
	st, eb := w.do(t, "POST", "/api/mcp-marketplace", w.su, map[string]any{"name": "Keyed Dead Entry", "url": dead,
		"transportType": "streamable-http", "category": "testing"})
	mustStatus(t, "create keyed entry", st, http.StatusCreated, eb)
	keyedEntry := eb["id"].(string)
	st, ib := w.do(t, "POST", "/api/mcp-marketplace/"+keyedEntry+"/install", a.admin, map[string]any{"workspaceId": a.id})
	mustStatus(t, "install keyed entry", st, http.StatusCreated, ib)
	hc := health.New(health.Options{Pool: w.env.Pool, Pinger: w.env.Deps.Upstreams, Logger: w.env.Deps.Logger,
		Retries: []time.Duration{}, AttemptTimeout: 2 * time.Second})
	sum, err := hc.Run(t.Context())
	if err != nil {
		t.Fatalf("health check: %v", err)
	}
	healthText := fmt.Sprint(sum)
	if !strings.Contains(healthText, "Keyed Dead Entry") {
		t.Errorf("the health check did not check the keyed entry: %s", healthText)
	}

	secrets := map[string]string{"header value": secretHeader, "tool argument": argSecret,
		"URL query secret": querySecret, "dead URL query secret": deadSecret, "second query secret": userSecret, "URL fragment": fragSecret}
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
	if !strings.Contains(logs, "api_key=[REDACTED]") {
		t.Errorf("no log line shows the redacted keyed URL: was the connect failure logged?")
	}
	check("health summary", healthText)
	// go-sdk's per-request session lifecycle lines are dropped (shared/logx).
	if strings.Contains(logs, "server session connected") || strings.Contains(logs, "server session disconnected") {
		t.Error("the logs hold go-sdk's session connect/disconnect noise")
	}
	// Every request wrote its access line.
	if n := strings.Count(logs, `"msg":"access"`); n < calls+8 {
		t.Errorf("%d access lines for more than %d requests", n, calls+8)
	}
	var spanText strings.Builder
	for _, sp := range spans.Ended() {
		spanText.WriteString(sp.Name() + "\n")
		for _, kv := range sp.Attributes() {
			fmt.Fprintf(&spanText, "%s=%s\n", kv.Key, kv.Value.String())
		}
		for _, ev := range sp.Events() {
			for _, kv := range ev.Attributes {
				fmt.Fprintf(&spanText, "%s=%s\n", kv.Key, kv.Value.String())
			}
		}
		fmt.Fprintf(&spanText, "%s\n", sp.Status().Description)
	}
	if len(spans.Ended()) < calls+8 || !strings.Contains(spanText.String(), "agentpack.workspace=") {
		t.Errorf("%d spans recorded, without workspaces?\n%.500s", len(spans.Ended()), spanText.String())
	}
	for what, s := range secrets {
		if strings.Contains(spanText.String(), s) {
			t.Errorf("span attributes contain the %s", what)
		}
	}
	check("metrics", w.env.Metrics.String())
	var rows string
	w.env.FlushAudit(t)
	if err := w.env.Pool.QueryRow(t.Context(), `SELECT coalesce((SELECT string_agg(row_to_json(a)::text, E'\n') FROM audit_events a), '') || E'\n' ||
		coalesce((SELECT string_agg(row_to_json(e)::text, E'\n') FROM event_log e), '')`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	check("audit and event rows", rows)
	var states string
	if err := w.env.Pool.QueryRow(t.Context(), `SELECT coalesce((SELECT string_agg(coalesce(last_error, ''), E'\n') FROM mcp_connections), '') || E'\n' ||
		coalesce((SELECT string_agg(coalesce(last_health_error, ''), E'\n') FROM mcp_catalog_entries), '')`).Scan(&states); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(states, "refused") && !strings.Contains(states, "unreachable") {
		t.Errorf("no last_error / last_health_error recorded for the dead keyed upstream: %q", states)
	}
	check("last_error and last_health_error", states)
	// The dead keyed upstream's failed calls are audited too, with their outcome.
	if n := w.count(t, `SELECT count(*) FROM audit_events WHERE kind = 'proxied' AND outcome = 'ok' AND workspace_id = $1`, a.id); n != calls {
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
	for _, p := range []string{"/api/mcp-connections/" + a.conn, "/api/mcp-connections?workspaceId=" + a.id, "/api/mcp-connections/" + a.conn + "/tools",
		"/api/chats/" + a.chat + "/tools", "/api/mcp-marketplace/" + w.entry, "/api/mcp-connections/statuses?workspaceId=" + a.id,
		"/api/mcp-connections/" + qconn + "/tools", "/api/mcp-connections/" + inst["id"].(string)} {
		_, raw := w.env.Do(t, "GET", p, a.admin, nil)
		check("GET "+p, string(raw))
	}
	// The REST connection detail is the one place that shows an admin the URL whole.
	if _, raw := w.env.Do(t, "GET", "/api/mcp-connections/"+qconn, a.admin, nil); !strings.Contains(string(raw), querySecret) {
		t.Errorf("the connection detail does not show the admin the URL: %s", raw)
	}
	// A catalog entry shows its URL whole to the superuser who edits it, to no one else.
	if _, raw := w.env.Do(t, "GET", "/api/mcp-marketplace/"+keyedEntry, w.su, nil); !strings.Contains(string(raw), deadSecret) {
		t.Errorf("the catalog entry does not show the superuser its URL: %s", raw)
	}
	for _, p := range []string{"/api/mcp-marketplace/" + keyedEntry, "/api/mcp-marketplace?search=Keyed"} {
		_, raw := w.env.Do(t, "GET", p, a.admin, nil)
		check("GET "+p, string(raw))
	}
	// A URL read from a redacted view cannot be written back: its key would become "[REDACTED]".
	_, lb := w.do(t, "GET", "/api/mcp-connections?workspaceId="+a.id, a.admin, nil)
	var listed string
	for _, c := range lb["connections"].([]any) {
		if m := c.(map[string]any); m["id"] == qconn {
			listed = m["url"].(string)
		}
	}
	if !strings.Contains(listed, "api_key=[REDACTED]") {
		t.Errorf("the list shows the keyed URL as %q", listed)
	}
	if st, ub := w.do(t, "PUT", "/api/mcp-connections/"+qconn, a.admin, map[string]any{"url": listed}); st != http.StatusBadRequest {
		t.Errorf("PUT with the redacted URL: %d %v, want 400", st, ub)
	}
	_, m := w.rpc(t, "/mcp/"+a.id, a.admin, "tools/call", map[string]any{"name": "agentpack_audit_list", "arguments": map[string]any{}}, nil)
	_, m2 := w.rpc(t, "/mcp/"+a.id, a.admin, "tools/call", map[string]any{"name": "agentpack_connections_list", "arguments": map[string]any{}}, nil)
	_, m3 := w.rpc(t, "/mcp/"+a.id, a.admin, "resources/read", map[string]any{"uri": "agentpack://catalog"}, nil)
	_, m4 := w.rpc(t, "/mcp/"+a.id, a.admin, "tools/call", map[string]any{"name": "agentpack_catalog_list", "arguments": map[string]any{}}, nil)
	_, m5 := w.rpc(t, "/mcp/"+a.id, a.member, "tools/call", map[string]any{"name": "agentpack_connections_list", "arguments": map[string]any{}}, nil)
	for _, x := range []map[string]any{m, m2, m3, m4, m5} {
		if x["result"] == nil {
			t.Errorf("gateway read failed: %v", x)
		}
		check("gateway answer", fmt.Sprint(x))
	}
}

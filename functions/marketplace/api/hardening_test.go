package api_test

import (
	"context"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/agentpack/gateway/shared/testpeer"
	"github.com/agentpack/gateway/shared/urlguard"
)

// TestHostileInputs is the §9 table: every hostile header or URL is refused on write with
// a clear 400 (VALIDATION_ERROR, a message saying what is wrong) and nothing is written —
// through create, update, install and catalog create, in deployed mode (https only, no
// private targets, names resolved on write) and, for what is refused everywhere, locally.
func TestHostileInputs(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	fx := fixture(t)
	existing, _ := w.connection(t, "Existing", fx.URL, w.wsA, map[string]string{"X-Key": "hostile-secret-0"})
	entry := w.entry(t, "Demo", fx.URL, "streamable-http")
	strict := w.strict(t, fakeResolver{
		"loopback.example.test": {netip.MustParseAddr("127.0.0.1")},
		"private.example.test":  {netip.MustParseAddr("93.184.216.34"), netip.MustParseAddr("10.1.2.3")},
		"metadata.example.test": {netip.MustParseAddr("169.254.169.254")},
		"v6local.example.test":  {netip.MustParseAddr("::1")},
		"public.example.test":   {netip.MustParseAddr("93.184.216.34")},
	})

	many := map[string]string{}
	for i := range 100 {
		many["X-H"+strings.Repeat("a", i%7)+string(rune('A'+i%26))+string(rune('a'+i/26))] = "v"
	}
	const ok = "https://public.example.test/mcp"
	type hostile struct {
		name    string
		url     string
		headers map[string]string
		local   bool   // refused in local mode too
		msg     string // part of the error message
	}
	cases := []hostile{
		{"CRLF in value", ok, map[string]string{"X-A": "a\r\nHost: evil"}, true, "control character"},
		{"LF in value", ok, map[string]string{"X-A": "a\nb"}, true, "control character"},
		{"NUL in value", ok, map[string]string{"X-A": "a\x00b"}, true, "control character"},
		{"Host", ok, map[string]string{"Host": "evil.example.com"}, true, `"Host"`},
		{"Transfer-Encoding", ok, map[string]string{"Transfer-Encoding": "chunked"}, true, "hop-by-hop"},
		{"Connection", ok, map[string]string{"Connection": "close"}, true, "hop-by-hop"},
		{"Content-Length", ok, map[string]string{"content-length": "0"}, true, "content-length"},
		{"Mcp-Session-Id", ok, map[string]string{"Mcp-Session-Id": "s"}, true, "MCP transport"},
		{"Proxy-Authorization", ok, map[string]string{"Proxy-Authorization": "Basic x"}, true, "hop-by-hop"},
		{"X-Forwarded-For", ok, map[string]string{"X-Forwarded-For": "1.2.3.4"}, true, "proxies"},
		{"100 headers", ok, many, true, "at most 32"},
		{"1 MB value", ok, map[string]string{"X-Big": strings.Repeat("x", 1_000_000)}, true, "at most 8192"},
		{"name with a space", ok, map[string]string{"Bad Name": "v"}, true, "not a valid HTTP field name"},
		{"name with a colon", ok, map[string]string{"X-A:b": "v"}, true, "not a valid HTTP field name"},
		{"empty name", ok, map[string]string{"": "v"}, true, "empty"},
		{"leading space in value", ok, map[string]string{"X-A": " v"}, true, "whitespace"},
		{"duplicate names", ok, map[string]string{"X-A": "1", "x-a": "2"}, true, "twice"},
		{"metadata http", "http://169.254.169.254/latest/meta-data/", nil, true, "https|cloud metadata"},
		{"metadata https", "https://169.254.169.254/latest/meta-data/", nil, true, "cloud metadata"},
		{"metadata v6", "https://[fd00:ec2::254]/", nil, true, "cloud metadata"},
		{"loopback v6", "https://[::1]/mcp", nil, false, "loopback"},
		{"loopback v6 over http", "http://[::1]/", nil, false, "https"},
		{"loopback v4", "https://127.0.0.1/mcp", nil, false, "loopback"},
		{"private", "https://10.0.0.5/mcp", nil, false, "private"},
		{"link-local", "https://169.254.10.10/mcp", nil, false, "link-local"},
		{"localhost name", "https://localhost:8443/mcp", nil, false, "localhost"},
		{"name resolving to 127.0.0.1", "https://loopback.example.test/mcp", nil, false, "resolves to a blocked address (127.0.0.1)"},
		{"name resolving to a private address too", "https://private.example.test/mcp", nil, false, "10.1.2.3"},
		{"name resolving to the metadata address", "https://metadata.example.test/", nil, false, "169.254.169.254"},
		{"name resolving to ::1", "https://v6local.example.test/", nil, false, "::1"},
		{"octal-hex IPv4", "https://0x7f000001/", nil, true, "non-standard"},
		{"short IPv4", "https://127.1/", nil, true, "non-standard"},
		{"file", "file:///etc/passwd", nil, true, "scheme"},
		{"gopher", "gopher://evil.example.com:70/_GET", nil, true, "scheme"},
		{"javascript", "javascript:alert(1)", nil, true, "scheme"},
		{"userinfo", "https://user:pass@public.example.test/mcp", nil, true, "user information"},
		{"plain http when deployed", "http://public.example.test/mcp", nil, false, "https"},
		{"no host", "https:///mcp", nil, true, "no host"},
		{"empty url", "", nil, true, "empty"},
	}
	if len(cases) < 20 {
		t.Fatalf("only %d hostile inputs", len(cases))
	}
	snapshot := func() [3]int {
		return [3]int{w.count(t, `SELECT count(*) FROM mcp_connections`), w.count(t, `SELECT count(*) FROM event_log`),
			w.count(t, `SELECT count(*) FROM mcp_catalog_entries`)}
	}
	storedURL := func() string {
		var u string
		_ = w.env.Pool.QueryRow(context.Background(), `SELECT url || headers::text FROM mcp_connections WHERE id = $1`, existing).Scan(&u)
		return u
	}
	before, beforeURL := snapshot(), storedURL()
	check := func(t *testing.T, what string, st int, b map[string]any, msg string) {
		t.Helper()
		if st != http.StatusBadRequest || errCode(b) != "VALIDATION_ERROR" {
			t.Errorf("%s: %d %v, want 400 VALIDATION_ERROR", what, st, b)
			return
		}
		for _, m := range strings.Split(msg, "|") {
			if strings.Contains(errMessage(b), m) {
				return
			}
		}
		t.Errorf("%s: message %q does not say %q", what, errMessage(b), msg)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			url := c.url
			hdr := c.headers
			create := map[string]any{"name": "hostile", "url": url, "workspaceId": w.wsA, "headers": hdr}
			st, b := doAt(t, strict, "POST", "/api/mcp-connections", w.adminA, create)
			check(t, "deployed create", st, b, c.msg)

			update := map[string]any{"url": url}
			if hdr != nil {
				update = map[string]any{"headers": hdr}
			}
			st, b = doAt(t, strict, "PUT", "/api/mcp-connections/"+existing, w.adminA, update)
			check(t, "deployed update", st, b, c.msg)

			if hdr != nil {
				st, b = doAt(t, strict, "POST", "/api/mcp-marketplace/"+entry+"/install", w.adminA,
					map[string]any{"workspaceId": w.wsA, "headers": hdr})
				check(t, "install", st, b, c.msg)
			} else {
				st, b = doAt(t, strict, "POST", "/api/mcp-marketplace", w.su, map[string]any{"name": "hostile entry", "url": url})
				if !strings.Contains(c.name, "resolving") && !strings.HasPrefix(c.name, "real hostname") {
					// entries are templates: names are resolved when installed, not here
					check(t, "catalog create", st, b, c.msg)
				} else if st == http.StatusCreated {
					w.do(t, "DELETE", "/api/mcp-marketplace/"+b["id"].(string), w.su, nil)
					before[1] += 2 // created + deleted events
				}
			}
			if c.local {
				st, b = w.do(t, "POST", "/api/mcp-connections", w.adminA, create)
				check(t, "local create", st, b, c.msg)
			}
		})
	}
	if after := snapshot(); after != before {
		t.Errorf("refused writes changed the database: %v → %v", before, after)
	}
	if storedURL() != beforeURL {
		t.Error("a refused update changed the stored connection")
	}

	// The switch: locally, private targets are allowed (the fixture is on 127.0.0.1).
	st, b := w.do(t, "POST", "/api/mcp-connections", w.adminA, map[string]any{"name": "loopback ok", "url": fx.URL, "workspaceId": w.wsA})
	want(t, "local loopback", st, http.StatusCreated, b)
	// Deployed, a public name is accepted on write.
	st, b = doAt(t, strict, "POST", "/api/mcp-connections", w.adminA, map[string]any{"name": "public", "url": ok, "workspaceId": w.wsA})
	want(t, "deployed public name", st, http.StatusCreated, b)
}

// TestDialTimeGuard: a name that passed the write-time check but resolves to loopback when
// dialled (DNS rebinding) is refused by the dialer in deployed mode; the failure is
// recorded, nothing is reached.
func TestDialTimeGuard(t *testing.T) {
	t.Parallel()
	// The dialer resolves through a test DNS server, so the rebinding happens on every
	// machine (no dependence on what this host's name resolves to).
	const h = "rebound.example.test"
	dial := testpeer.Resolver(t, map[string][]netip.Addr{h: {netip.MustParseAddr("127.0.0.1")}})
	w := newWorld(t, nil)
	// The write-time lookup says "public"; the dialer's resolver says loopback.
	strict := w.strictWith(t, fakeResolver{h: {netip.MustParseAddr("93.184.216.34")}},
		urlguard.New(&urlguard.Options{RequireHTTPS: true, Resolver: dial}))
	st, b := doAt(t, strict, "POST", "/api/mcp-connections", w.adminA, map[string]any{
		"name": "rebound", "url": "https://" + h + ":1/mcp", "workspaceId": w.wsA})
	want(t, "create", st, http.StatusCreated, b)
	c := b["connect"].(map[string]any)
	if c["success"] != false || !strings.Contains(c["error"].(string), "not allowed (loopback)") {
		t.Errorf("connect to a rebound name: %v", c)
	}
}

// TestEveryBadHeaderNamed (issue 34): a connection created, updated or installed with
// several bad headers at once — CR/LF in a value, Transfer-Encoding, Host, a name with a
// space, an empty name — next to a good one is refused 400 VALIDATION_ERROR whose
// details.headers names every bad entry (and only those), whose message names each, and
// which quotes no value; nothing is stored.
func TestEveryBadHeaderNamed(t *testing.T) {
	t.Parallel()
	w := newWorld(t, nil)
	fx := fixture(t)
	existing, _ := w.connection(t, "Existing", fx.URL, w.wsA, map[string]string{"X-Key": "kept-secret-1"})
	entry := w.entry(t, "Demo", fx.URL, "streamable-http")
	bad := map[string]string{
		"X-Split":           "secret-a\r\nX-Injected: secret-b",
		"Transfer-Encoding": "chunked",
		"Host":              "evil.example.com",
		"Bad Name":          "secret-c",
		"":                  "secret-d",
		"X-Fine":            "secret-fine",
	}
	wantNamed := []string{"", "Bad Name", "Host", "Transfer-Encoding", "X-Split"} // sorted
	snapshot := func() [3]int {
		return [3]int{w.count(t, `SELECT count(*) FROM mcp_connections`), w.count(t, `SELECT count(*) FROM event_log`),
			w.count(t, `SELECT count(*) FROM mcp_connection_tools`)}
	}
	stored := func() string {
		var s string
		_ = w.env.Pool.QueryRow(context.Background(), `SELECT headers::text FROM mcp_connections WHERE id = $1`, existing).Scan(&s)
		return s
	}
	before, beforeHeaders := snapshot(), stored()
	for _, tc := range []struct {
		name, method, path string
		body               map[string]any
	}{
		{"create", "POST", "/api/mcp-connections", map[string]any{"name": "bad", "url": fx.URL, "workspaceId": w.wsA, "headers": bad}},
		{"update", "PUT", "/api/mcp-connections/" + existing, map[string]any{"headers": bad}},
		{"install", "POST", "/api/mcp-marketplace/" + entry + "/install", map[string]any{"workspaceId": w.wsA, "headers": bad}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, raw := w.env.Do(t, tc.method, tc.path, w.adminA, tc.body)
			b := decode(t, raw)
			if status != http.StatusBadRequest || errCode(b) != "VALIDATION_ERROR" {
				t.Fatalf("%d %s, want 400 VALIDATION_ERROR", status, raw)
			}
			details, _ := b["error"].(map[string]any)["details"].(map[string]any)
			list, _ := details["headers"].([]any)
			var named []string
			for _, e := range list {
				m, _ := e.(map[string]any)
				h, _ := m["header"].(string)
				msg, _ := m["message"].(string)
				named = append(named, h)
				if msg == "" {
					t.Errorf("entry %q has no message", h)
				}
			}
			if strings.Join(named, "|") != strings.Join(wantNamed, "|") {
				t.Errorf("details.headers names %q, want %q: %s", named, wantNamed, raw)
			}
			for _, h := range wantNamed[1:] {
				if !strings.Contains(errMessage(b), h) {
					t.Errorf("message does not name %q: %s", h, errMessage(b))
				}
			}
			if strings.Contains(string(raw), "secret") || strings.Contains(string(raw), "evil.example.com") {
				t.Errorf("the answer quotes a header value: %s", raw)
			}
		})
	}
	if after := snapshot(); after != before {
		t.Errorf("refused writes changed the database: %v → %v", before, after)
	}
	if got := stored(); got != beforeHeaders {
		t.Errorf("a refused update changed the stored headers: %s → %s", beforeHeaders, got)
	}
}

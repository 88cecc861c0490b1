package upstreamauth

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// TestCallbackPageBackLink: the page links back to where the flow started when that is an
// http(s) URL on the callback's own host or a path on it, says "Back to the console" for the admin console,
// and drops anything else (another scheme, a protocol-relative "//host").
func TestCallbackPageBackLink(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ back, want string }{
		{"https://gw.example/admin/#/connections", `<a id="back" href="https://gw.example/admin/#/connections">Back to the console</a>`},
		{"/admin/#/connections", `<a id="back" href="/admin/#/connections">Back to the console</a>`},
		{"https://gw.example/done", `<a id="back" href="https://gw.example/done">Back</a>`},
		{"https://app.example/done", "You can close this window."}, // another site: no link
		{"https://gw.example.evil.test/admin", "You can close this window."},
		{"http://127.0.0.1:9/admin/", "You can close this window."}, // loopback only from a loopback callback
		{"//evil.example/admin", "You can close this window."},
		{"/\\evil.example", "You can close this window."},
		{"javascript:alert(1)", "You can close this window."},
		{"", "You can close this window."},
	} {
		rec := httptest.NewRecorder()
		writePage(rec, 200, Outcome{Status: OutcomeAuthorized}, tc.back, "gw.example")
		if body := rec.Body.String(); !strings.Contains(body, tc.want) {
			t.Errorf("back %q: page lacks %s\n%s", tc.back, tc.want, body)
		}
		if csp := rec.Header().Get("Content-Security-Policy"); csp != "default-src 'none'; style-src 'unsafe-inline'" {
			t.Errorf("CSP %q", csp)
		}
	}
}

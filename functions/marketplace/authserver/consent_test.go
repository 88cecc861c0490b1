package authserver

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// The consent page's form-action names the redirect URI's origin or custom scheme, and
// nothing a redirect URI could smuggle into the policy.
func TestCSPSource(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"http://127.0.0.1:45583/oauth/callback":  "http://127.0.0.1:45583",
		"HTTPS://Client.Example/cb?x=1":          "https://Client.Example",
		"http://[::1]:8080/cb":                   "http://[::1]:8080",
		"cursor://anysphere.cursor-mcp/oauth/cb": "cursor:",
		"com.example.app:/oauth2redirect":        "com.example.app:",
		"http://a.example;script-src%20*/cb":     "",
		"http://a%20b.example/cb":                "",
		"https:///no-host":                       "",
	} {
		u, err := url.Parse(in)
		if err != nil {
			if want != "" {
				t.Fatalf("%s: %v", in, err)
			}
			continue
		}
		if got := cspSource(u); got != want {
			t.Errorf("cspSource(%q) = %q, want %q", in, got, want)
		}
	}
}

// The console client exists only on a request of this origin: fosite's GetClient without
// the request's base (never the case through Handler) is invalid_client, not a client
// with an empty redirect URI.
func TestConsoleClientNeedsBase(t *testing.T) {
	t.Parallel()
	if _, err := consoleClient(t.Context()); err == nil || !strings.Contains(err.Error(), "invalid_client") {
		t.Fatalf("console client without a base: %v", err)
	}
	c, err := consoleClient(context.WithValue(t.Context(), baseKey{}, "https://gw.example"))
	if err != nil || !slices.Equal(c.GetRedirectURIs(), []string{"https://gw.example/admin/"}) || !c.IsPublic() || !isConsole(c) {
		t.Fatalf("console client: %+v %v", c, err)
	}
}

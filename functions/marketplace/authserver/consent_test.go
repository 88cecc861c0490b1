package authserver

import (
	"net/url"
	"testing"
)

// The consent page's form-action names the redirect URI's origin or custom scheme, and
// nothing a redirect URI could smuggle into the policy.
func TestCSPSource(t *testing.T) {
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

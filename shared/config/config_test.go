package config

import (
	"strings"
	"testing"
)

// TestConsoleOAuth: the console's OAuth settings go together, and deployed mode wants
// https endpoints.
func TestConsoleOAuth(t *testing.T) {
	const (
		authz = "https://id.example.com/authorize"
		tok   = "https://id.example.com/token"
	)
	cases := []struct {
		name, env, client, authorize, token, err string
	}{
		{"none", "local", "", "", "", ""},
		{"complete", "deployed", "console", authz, tok, ""},
		{"http locally", "local", "console", "http://127.0.0.1:9000/authorize", "http://127.0.0.1:9000/token", ""},
		{"partial", "local", "console", authz, "", "go together"},
		{"client only", "deployed", "console", "", "", "go together"},
		{"http when deployed", "deployed", "console", "http://id.example.com/authorize", tok, "CONSOLE_OAUTH_AUTHORIZE_URL"},
		{"relative", "local", "console", authz, "/token", "CONSOLE_OAUTH_TOKEN_URL"},
		{"other scheme", "local", "console", "javascript:alert(1)", tok, "CONSOLE_OAUTH_AUTHORIZE_URL"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("APP_ENV", tc.env)
			t.Setenv("JWT_SECRET", "s")
			t.Setenv("CONSOLE_OAUTH_CLIENT_ID", tc.client)
			t.Setenv("CONSOLE_OAUTH_AUTHORIZE_URL", tc.authorize)
			t.Setenv("CONSOLE_OAUTH_TOKEN_URL", tc.token)
			c, err := Load()
			if tc.err == "" {
				if err != nil || c.ConsoleClientID != tc.client || c.ConsoleTokenURL != tc.token {
					t.Fatalf("Load: %+v %v", c, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("Load error %v, want one naming %q", err, tc.err)
			}
		})
	}
}

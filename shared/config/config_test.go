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

// TestNewToolsNeedApproval: NEW_TOOLS_NEED_APPROVAL is off by default, read as a boolean,
// and a malformed value is an error naming the variable.
func TestNewToolsNeedApproval(t *testing.T) {
	for _, tc := range []struct {
		value   string
		want    bool
		wantErr bool
	}{{"", false, false}, {"true", true, false}, {"1", true, false}, {"false", false, false}, {"sometimes", false, true}} {
		t.Run(tc.value, func(t *testing.T) {
			t.Setenv("APP_ENV", "local")
			t.Setenv("NEW_TOOLS_NEED_APPROVAL", tc.value)
			c, err := Load()
			if tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), "NEW_TOOLS_NEED_APPROVAL") {
					t.Fatalf("error %v, want one naming NEW_TOOLS_NEED_APPROVAL", err)
				}
				return
			}
			if err != nil || c.NewToolsNeedApproval != tc.want {
				t.Fatalf("%v %v, want %v", c, err, tc.want)
			}
		})
	}
}

// TestDatabasePoolSize: DATABASE_POOL_SIZE overrides the function's default pool size; a
// value that is not an integer from 1 to 100 is an error naming the variable.
func TestDatabasePoolSize(t *testing.T) {
	for _, tc := range []struct {
		value   string
		want    int
		wantErr bool
	}{{"", 2, false}, {"8", 8, false}, {"100", 100, false}, {"0", 0, true}, {"101", 0, true}, {"many", 0, true}, {"-3", 0, true}} {
		t.Run(tc.value, func(t *testing.T) {
			t.Setenv("APP_ENV", "local")
			t.Setenv("DATABASE_POOL_SIZE", tc.value)
			c, err := Load()
			if tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), "DATABASE_POOL_SIZE") {
					t.Fatalf("error %v, want one naming DATABASE_POOL_SIZE", err)
				}
				return
			}
			if err != nil || c.PoolSize(2) != tc.want {
				t.Fatalf("%+v %v, want pool size %d", c, err, tc.want)
			}
		})
	}
}

// TestDatabaseMigrateURL: migrations go to DATABASE_MIGRATE_URL, or to DATABASE_URL when it
// is unset (no pooler in front).
func TestDatabaseMigrateURL(t *testing.T) {
	t.Setenv("APP_ENV", "local")
	t.Setenv("DATABASE_URL", "postgres://proxy/db")
	t.Setenv("DATABASE_MIGRATE_URL", "")
	if c, err := Load(); err != nil || c.DatabaseMigrateURL != "postgres://proxy/db" {
		t.Fatalf("unset: %+v %v", c, err)
	}
	t.Setenv("DATABASE_MIGRATE_URL", "postgres://direct/db")
	if c, err := Load(); err != nil || c.DatabaseMigrateURL != "postgres://direct/db" || c.DatabaseURL != "postgres://proxy/db" {
		t.Fatalf("set: %+v %v", c, err)
	}
}

// TestDeployedWithoutJWTSettings: deployed, JWT_SECRET and JWT_JWKS_URL are optional (the
// gateway's own signing key verifies its tokens; docs/DEPLOY.md) and no development secret
// is filled in; locally the development secret is.
func TestDeployedWithoutJWTSettings(t *testing.T) {
	t.Setenv("JWT_SECRET", "")
	t.Setenv("JWT_JWKS_URL", "")
	t.Setenv("APP_ENV", "deployed")
	c, err := Load()
	if err != nil || c.JWTSecret != "" {
		t.Fatalf("deployed: %+v %v, want no error and no secret", c, err)
	}
	t.Setenv("APP_ENV", "local")
	if c, err = Load(); err != nil || c.JWTSecret != DevJWTSecret {
		t.Fatalf("local: %v %v, want the development secret", c.JWTSecret, err)
	}
}

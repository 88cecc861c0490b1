package check

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/gateway/infra/rie"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/dbtest"
	"github.com/agentpack/gateway/shared/testpeer"
	"github.com/jackc/pgx/v5"
)

// The demo ids that events/*.json use (infra/scripts/gen-events.py).
const (
	eventWorkspace = "0a9e2f54-1c2b-4c1e-9f4a-6d0c8a1b2c3d"
	eventChat      = "c4a8e1f0-2b3d-4e5f-8a9b-0c1d2e3f4a5b"
	testJWTSecret  = "infra-check-secret"
)

// invokeCase is one event fed to a function and the check of its answer.
type invokeCase struct {
	event string
	check func(t *testing.T, inv rie.Invocation)
}

// emulatorCases: per function, the events of events/ and what the answer must be. The
// first event of each function is its cold invoke.
var emulatorCases = map[string][]invokeCase{
	"mcp": {
		{"mcp-tools-list.json", func(t *testing.T, inv rie.Invocation) {
			r := httpOK(t, inv, 200)
			var msg struct {
				JSONRPC string
				ID      int
				Result  struct {
					Tools []struct{ Name string }
				}
				Error *struct {
					Code    int
					Message string
				}
			}
			if err := json.Unmarshal([]byte(r.Body), &msg); err != nil {
				t.Fatalf("tools/list body is not JSON-RPC: %v: %s", err, r.Body)
			}
			if msg.Error != nil || msg.ID != 1 || len(msg.Result.Tools) == 0 {
				t.Fatalf("tools/list answer: %s", r.Body)
			}
			for _, tool := range msg.Result.Tools {
				if !strings.HasPrefix(tool.Name, "agentpack_") {
					t.Errorf("unexpected tool %q in an empty workspace", tool.Name)
				}
			}
			t.Logf("tools/list: %d built-in tools", len(msg.Result.Tools))
		}},
		{"mcp-get-405.json", func(t *testing.T, inv rie.Invocation) { httpOK(t, inv, 405) }},
		{"mcp-preflight.json", func(t *testing.T, inv rie.Invocation) {
			r, err := inv.HTTP()
			if err != nil {
				t.Fatal(err)
			}
			if r.StatusCode >= 500 || r.StatusCode == 401 {
				t.Fatalf("preflight: %d %s", r.StatusCode, r.Body)
			}
		}},
		{"well-known-protected-resource.json", func(t *testing.T, inv rie.Invocation) {
			r := httpOK(t, inv, 200)
			if !strings.Contains(r.Body, `"resource"`) {
				t.Errorf("RFC 9728 metadata without resource: %s", r.Body)
			}
		}},
		{"health.json", func(t *testing.T, inv rie.Invocation) { httpOK(t, inv, 200) }},
	},
	"marketplace": {
		{"marketplace-catalog-list.json", func(t *testing.T, inv rie.Invocation) {
			r := httpOK(t, inv, 200)
			if !json.Valid([]byte(r.Body)) {
				t.Errorf("catalog list is not JSON: %s", r.Body)
			}
		}},
		// The admin console through API Gateway's payload: the page and its CSP.
		{"console-page.json", func(t *testing.T, inv rie.Invocation) {
			r := httpOK(t, inv, 200)
			if !strings.Contains(r.Body, `<div id="app">`) || !strings.Contains(fmt.Sprint(r.Headers), "script-src 'self'") {
				t.Errorf("console page: %v %.200s", r.Headers, r.Body)
			}
		}},
	},
	"pins": {
		{"chats-list.json", func(t *testing.T, inv rie.Invocation) {
			r := httpOK(t, inv, 200)
			if !strings.Contains(r.Body, `"chats":[`) {
				t.Errorf("chats list: %s", r.Body)
			}
		}},
		{"pins-list.json", func(t *testing.T, inv rie.Invocation) {
			r := httpOK(t, inv, 200)
			if !json.Valid([]byte(r.Body)) {
				t.Errorf("pins list is not JSON: %s", r.Body)
			}
		}},
	},
	"healthcheck": {
		{"healthcheck-scheduled.json", func(t *testing.T, inv rie.Invocation) {
			if inv.Status != 200 || strings.Contains(string(inv.Payload), `"errorMessage"`) {
				t.Fatalf("health check pass failed: %d %s", inv.Status, inv.Payload)
			}
		}},
	},
}

// TestEmulator builds each function's bootstrap for linux on this machine's architecture,
// runs it under the Lambda runtime emulator on loopback, feeds it the events of events/
// and checks the answers. It logs each binary's size and its cold start: emulator process
// start to the first answered invoke, the emulator's Init Duration, and a warm invoke.
func TestEmulator(t *testing.T) {
	root := testpeer.RepoRoot(t)
	emulator := requireEmulator(t, root)
	_, dbURL := dbtest.Fresh(t)
	seedEventRows(t, dbURL)
	token, err := auth.Mint(testJWTSecret, auth.Principal{Subject: "infra-check", Role: auth.RoleAdmin,
		Workspaces: []string{eventWorkspace}}, 15*time.Minute)
	if err != nil {
		t.Fatal(err)
	}

	for _, name := range []string{"mcp", "marketplace", "pins", "healthcheck"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if _, err := os.Stat(filepath.Join(root, "functions", name, "main.go")); err != nil {
				if os.Getenv("REQUIRE_INFRA") == "1" {
					t.Fatalf("functions/%s/main.go missing", name)
				}
				t.Skipf("functions/%s/main.go not there yet", name)
			}
			ctx := t.Context()
			bootstrap, size, err := rie.Build(ctx, root, name, t.TempDir(), "")
			if err != nil {
				t.Fatal(err)
			}
			e, err := rie.Start(ctx, rie.Options{
				Emulator:  emulator,
				Bootstrap: bootstrap,
				Timeout:   30 * time.Second,
				Env: []string{
					"AWS_LAMBDA_FUNCTION_NAME=" + name,
					"AWS_LAMBDA_FUNCTION_MEMORY_SIZE=512",
					"AWS_REGION=eu-west-1",
					"APP_ENV=local",
					"LOG_LEVEL=info",
					"DATABASE_URL=" + dbURL,
					"JWT_SECRET=" + testJWTSecret,
					"AUTH_SERVER_URL=https://auth.agentpack.example",
					"PUBLIC_BASE_URL=https://abc123def4.execute-api.eu-west-1.amazonaws.com",
					"ALLOWED_ORIGINS=https://app.agentpack.example",
					"CATALOG_DIR=" + t.TempDir(),
					"CATALOG_TTL=5s",
					"ALLOW_PRIVATE_UPSTREAMS=true",
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(e.Stop)
			defer func() {
				if t.Failed() {
					t.Logf("emulator output:\n%s", e.Output())
				}
			}()

			for i, c := range emulatorCases[name] {
				payload := loadEvent(t, root, c.event, token)
				inv, err := e.Invoke(ctx, payload)
				if err != nil {
					t.Fatal(err)
				}
				if i == 0 {
					warm, err := e.Invoke(ctx, payload)
					if err != nil {
						t.Fatal(err)
					}
					initDur, _ := e.InitDuration()
					t.Logf("%-12s size: %5.2f MiB (linux/%s)  cold start: %v to first answer (init %v, first invoke %v, warm invoke %v)",
						name, float64(size)/(1<<20), goarch(), inv.SinceStart.Round(time.Millisecond),
						initDur.Round(10*time.Microsecond), inv.Latency.Round(10*time.Microsecond),
						warm.Latency.Round(10*time.Microsecond))
				}
				t.Run(strings.TrimSuffix(c.event, ".json"), func(t *testing.T) { c.check(t, inv) })
			}
		})
	}
}

// loadEvent reads events/<name> and replaces its bearer token with token (the committed
// events carry a long-lived dev token signed with the local dev secret).
func loadEvent(t *testing.T, root, name, token string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "events", name))
	if err != nil {
		t.Fatal(err)
	}
	var ev map[string]any
	if err := json.Unmarshal(b, &ev); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if h, ok := ev["headers"].(map[string]any); ok {
		if _, ok := h["authorization"]; ok {
			h["authorization"] = "Bearer " + token
		}
	}
	out, _ := json.Marshal(ev)
	return out
}

// seedEventRows creates the workspace and chat that the events name.
func seedEventRows(t *testing.T, url string) {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	for _, q := range []string{
		fmt.Sprintf(`INSERT INTO workspaces (id, name) VALUES ('%s', 'Infra check')`, eventWorkspace),
		fmt.Sprintf(`INSERT INTO chats (id, workspace_id, title) VALUES ('%s', '%s', 'Infra check chat')`, eventChat, eventWorkspace),
	} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("seed: %v", err)
		}
	}
}

// httpOK decodes inv as an HTTP API v2 response with the given status.
func httpOK(t *testing.T, inv rie.Invocation, status int) rie.HTTPResponse {
	t.Helper()
	r, err := inv.HTTP()
	if err != nil {
		t.Fatal(err)
	}
	if r.StatusCode != status {
		t.Fatalf("status %d, want %d: %s", r.StatusCode, status, r.Body)
	}
	return r
}

func goarch() string {
	if v := os.Getenv("GOARCH"); v != "" {
		return v
	}
	return runtimeGOARCH
}

// requireEmulator returns the aws-lambda-rie binary, or skips t (fails it when
// REQUIRE_INFRA=1) when it is not installed.
// localFunctionEnv is the environment of a function run under the emulator against the
// local test database dbURL (APP_ENV local, loopback upstreams allowed).
func localFunctionEnv(t *testing.T, name, dbURL string) []string {
	return []string{"AWS_LAMBDA_FUNCTION_NAME=" + name, "AWS_REGION=eu-west-1", "APP_ENV=local", "LOG_LEVEL=info",
		"DATABASE_URL=" + dbURL, "JWT_SECRET=" + testJWTSecret, "CATALOG_DIR=" + t.TempDir(), "ALLOW_PRIVATE_UPSTREAMS=true"}
}

// startEmulated starts bootstrap under the emulator with env and timeout; t.Cleanup stops
// it, and a failed test logs its output.
func startEmulated(t *testing.T, emulator, bootstrap string, env []string, timeout time.Duration) *rie.Emulator {
	t.Helper()
	e, err := rie.Start(t.Context(), rie.Options{Emulator: emulator, Bootstrap: bootstrap, Timeout: timeout, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("emulator output:\n%s", e.Output())
		}
		e.Stop()
	})
	return e
}

func requireEmulator(t *testing.T, root string) string {
	t.Helper()
	emulator := rie.Binary(root)
	if emulator == "" {
		if os.Getenv("REQUIRE_INFRA") == "1" {
			t.Fatal("aws-lambda-rie not found: run `make rie-install` (or set RIE)")
		}
		t.Skip("aws-lambda-rie not found: run `make rie-install` (REQUIRE_INFRA=1 makes this a failure)")
	}
	return emulator
}

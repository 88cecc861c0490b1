package main

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentpack/gateway/shared/auth"
)

// TestHelp: `local help` prints the commands and succeeds; an unknown command prints the
// same list and fails.
func TestHelp(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "local")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "help").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "serve") || !strings.Contains(string(out), "DEMO_UPSTREAM_PORT") {
		t.Fatalf("help: %v\n%s", err, out)
	}
	out, err = exec.Command(bin, "nope").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "usage: local COMMAND") || !strings.Contains(string(out), `unknown command "nope"`) {
		t.Fatalf("unknown command: %v\n%s", err, out)
	}
}

// TestBanner: the banner names the real base URL (PORT), the console sign-in links, the
// aggregate endpoint and the demo upstream's single-server endpoint, ready-to-paste MCP
// Inspector and Claude Code lines reading $AGENTPACK_TOKEN, the Node version they need,
// the OAuth demo upstream with its catalog entry, and the console's Client setup page —
// and prints each token exactly once.
func TestBanner(t *testing.T) {
	t.Parallel()
	tok := map[string]string{auth.RoleAdmin: "ADMINTOKEN", auth.RoleMember: "MEMBERTOKEN", auth.RoleSuperuser: "SUPERTOKEN"}
	b := banner("http://127.0.0.1:18480", "http://127.0.0.1:18481/mcp", "http://127.0.0.1:18482/mcp", "abc123", "demoupstream", tok)
	for _, want := range []string{
		"running on http://127.0.0.1:18480",
		"http://127.0.0.1:18480/admin/dev/sign-in?code=abc123&as=admin",
		"as=member", "as=superuser",
		"MCP endpoint:   http://127.0.0.1:18480/mcp/" + demoWorkspace,
		"One server:     http://127.0.0.1:18480/mcp/" + demoWorkspace + "/servers/demoupstream",
		"export AGENTPACK_TOKEN=ADMINTOKEN",
		"npx @modelcontextprotocol/inspector --cli http://127.0.0.1:18480/mcp/" + demoWorkspace + " --transport http --method tools/list",
		`--header "Authorization: Bearer $AGENTPACK_TOKEN"`,
		"claude mcp add --transport http agentpack http://127.0.0.1:18480/mcp/" + demoWorkspace,
		"Node >= 22",
		"superuser token: SUPERTOKEN",
		demoChat,
		"OAuth demo:     http://127.0.0.1:18482/mcp", `"Demo OAuth upstream"`, "oauth_per_user",
		`Client setup: the console's "Client setup" page, http://127.0.0.1:18480/admin/#/setup`,
	} {
		if !strings.Contains(b, want) {
			t.Errorf("banner lacks %q:\n%s", want, b)
		}
	}
	if strings.Contains(b, "8080") {
		t.Error("banner names 8080 although PORT is 18480")
	}
	for _, v := range tok {
		if n := strings.Count(b, v); n != 1 {
			t.Errorf("token %s printed %d times", v, n)
		}
	}
	if n := strings.Count(b, "\n"); n > 40 {
		t.Errorf("banner is %d lines", n)
	}
}

// TestTokenSuperuser: `local token` offers a superuser token (catalog editing) that the
// API's verifier accepts.
func TestTokenSuperuser(t *testing.T) {
	t.Setenv("JWT_SECRET", "token-test-secret")
	var sb strings.Builder
	if err := cmdToken(&sb); err != nil {
		t.Fatal(err)
	}
	var tok string
	for _, l := range strings.Split(sb.String(), "\n") {
		if strings.HasPrefix(l, "superuser token:") {
			tok = strings.Fields(l)[2]
		}
	}
	v, err := auth.NewVerifier(t.Context(), auth.Options{Secret: "token-test-secret"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := v.Verify(t.Context(), tok)
	if err != nil || !p.IsSuperuser() {
		t.Fatalf("superuser token: %+v %v\n%s", p, err, sb.String())
	}
}

// TestPgRemembersPort: scripts/pg.sh remembers the port it started a cluster on, so
// that a later call without PGPORT reaches that cluster, and a call with another PGPORT
// while it runs is told so and gets the running one. It starts a real cluster.
func TestPgRemembersPort(t *testing.T) {
	if _, err := exec.LookPath("pg_ctl"); err != nil {
		if m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb"); len(m) == 0 {
			if os.Getenv("REQUIRE_DB") == "1" {
				t.Fatal("no PostgreSQL binaries")
			}
			t.Skip("no PostgreSQL binaries")
		}
	}
	state := t.TempDir()
	_ = os.Chmod(state, 0o755)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	pg := func(pgport string, args ...string) (string, string) {
		t.Helper()
		cmd := exec.Command("../../scripts/pg.sh", args...)
		cmd.Env = append(os.Environ(), "PG_STATE_DIR="+state, "PGPORT="+pgport)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("pg.sh %v: %v\n%s", args, err, stderr.String())
		}
		return strings.TrimSpace(string(out)), stderr.String()
	}
	t.Cleanup(func() { pg("", "destroy") })
	if url, _ := pg(port, "start"); !strings.Contains(url, ":"+port+"/") {
		t.Fatalf("start: %s", url)
	}
	if url, _ := pg("", "url"); !strings.Contains(url, ":"+port+"/") {
		t.Fatalf("url without PGPORT: %s, want port %s", url, port)
	}
	url, msg := pg("1", "start")
	if !strings.Contains(url, ":"+port+"/") || !strings.Contains(msg, "already runs on 127.0.0.1:"+port) {
		t.Fatalf("start with another PGPORT: %s (%s)", url, msg)
	}
}

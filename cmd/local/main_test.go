package main

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
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

// TestBanner: the banner's first lines say what to paste where — the MCP URL, the demo
// upstream's single-server URL, and each client's URL-only set-up (Claude Code add then
// login, gemini-cli, VS Code and Cursor with the url alone, mcp-remote without a header),
// with no token among them — and the identity provider's sign-in line comes before "Ctrl-C
// stops the server". Below: the console's links and Client setup page, the REST API, the
// OAuth demo, and under their own heading the development tokens (each printed once) with
// the header commands, which read $AGENTPACK_TOKEN.
func TestBanner(t *testing.T) {
	t.Parallel()
	tok := map[string]string{auth.RoleAdmin: "ADMINTOKEN", auth.RoleMember: "MEMBERTOKEN", auth.RoleSuperuser: "SUPERTOKEN"}
	mcp := "http://127.0.0.1:18480/mcp/" + demoWorkspace
	b := banner("http://127.0.0.1:18480", "http://127.0.0.1:18481/mcp", "http://127.0.0.1:18482/mcp", "abc123", "demoupstream", tok,
		"http://127.0.0.1:18480/admin/#/sign-in")
	lines := strings.Split(b, "\n")
	// The first lines, exactly.
	want := []string{
		"",
		"Agentpack MCP Gateway is running on http://127.0.0.1:18480.",
		"",
		"Connect an MCP client: paste the URL; the client signs you in by itself (OAuth).",
		"  MCP URL:        " + mcp + "   (every installed server's tools)",
		"  One server:     " + mcp + `/servers/demoupstream   (only "Demo upstream")`,
		"  Claude Code:    claude mcp add --transport http agentpack " + mcp,
		"                  claude mcp login agentpack",
		"  Gemini CLI:     gemini mcp add --transport http agentpack " + mcp,
		`  VS Code:        {"servers":{"agentpack":{"type":"http","url":"` + mcp + `"}}}`,
		`  Cursor:         {"mcpServers":{"agentpack":{"url":"` + mcp + `"}}}`,
		`  Claude Desktop: {"mcpServers":{"agentpack":{"args":["-y","mcp-remote","` + mcp + `","--allow-http"],"command":"npx"}}}`,
		"  Sign in with the identity provider: http://127.0.0.1:18480/admin/#/sign-in",
	}
	if len(lines) < len(want) {
		t.Fatalf("banner:\n%s", b)
	}
	for i, w := range want {
		if lines[i] != w {
			t.Errorf("line %d:\n got  %q\n want %q", i+1, lines[i], w)
		}
	}
	for _, l := range lines[:len(want)] {
		if strings.Contains(l, "TOKEN") || strings.Contains(l, "Bearer") || strings.Contains(l, "header") {
			t.Errorf("a URL-only line holds a token or a header: %q", l)
		}
	}
	if i, j := strings.Index(b, "Sign in with the identity provider"), strings.Index(b, "Ctrl-C stops the server."); i < 0 || j < i {
		t.Errorf("the identity provider's line (at %d) must come before Ctrl-C (at %d)", i, j)
	}
	for _, want := range []string{
		"http://127.0.0.1:18480/admin/dev/sign-in?code=abc123&as=admin",
		"as=member", "as=superuser",
		"Client setup:   http://127.0.0.1:18480/admin/#/setup",
		"Clients without OAuth (a header) and the REST API",
		"export AGENTPACK_TOKEN=ADMINTOKEN",
		"npx @modelcontextprotocol/inspector --cli " + mcp + " --transport http --method tools/list",
		`--header "Authorization: Bearer $AGENTPACK_TOKEN"`,
		"Node >= 22",
		"superuser token: SUPERTOKEN",
		demoChat,
		"OAuth demo:     http://127.0.0.1:18482/mcp", `"Demo OAuth upstream"`, "oauth_per_user",
	} {
		if !strings.Contains(b, want) {
			t.Errorf("banner lacks %q:\n%s", want, b)
		}
	}
	if strings.Index(b, "Clients without OAuth") < strings.Index(b, "Claude Desktop:") {
		t.Error("the header tokens come before the URL-only set-up")
	}
	if strings.Contains(b, "8080") || strings.Contains(b, "%!") {
		t.Errorf("banner names 8080 although PORT is 18480, or a format error:\n%s", b)
	}
	for _, v := range tok {
		if n := strings.Count(b, v); n != 1 {
			t.Errorf("token %s printed %d times", v, n)
		}
	}
	if n := strings.Count(b, "\n"); n > 45 {
		t.Errorf("banner is %d lines", n)
	}
	// Without an identity provider there is no sign-in line.
	if b := banner("http://127.0.0.1:1", "", "", "c", "h", tok, ""); strings.Contains(b, "identity provider") {
		t.Error("a sign-in line without an identity provider")
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

// pgScratch is what a test of scripts/pg.sh starts from: the PostgreSQL binaries (skipped
// without them, failed under REQUIRE_DB=1), a state folder the postgres user may enter, and a
// free loopback port for the cluster.
func pgScratch(t *testing.T) (state, port string) {
	t.Helper()
	if _, err := exec.LookPath("pg_ctl"); err != nil {
		if m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb"); len(m) == 0 {
			if os.Getenv("REQUIRE_DB") == "1" {
				t.Fatal("no PostgreSQL binaries")
			}
			t.Skip("no PostgreSQL binaries")
		}
	}
	state = t.TempDir()
	_ = os.Chmod(state, 0o755)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port = strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	return state, port
}

// TestPgRemembersPort: scripts/pg.sh remembers the port it started a cluster on, so
// that a later call without PGPORT reaches that cluster, and a call with another PGPORT
// while it runs is told so and gets the running one. It starts a real cluster.
func TestPgRemembersPort(t *testing.T) {
	state, port := pgScratch(t)
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

// TestLocalCluster: a loopback DATABASE_URL names the local cluster the 503 speaks of
// (db.SetLocalCluster); any other host names none.
func TestLocalCluster(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"postgres://postgres@127.0.0.1:54329/agentpack?sslmode=disable": "127.0.0.1:54329",
		"postgres://u@localhost/agentpack":                              "localhost:5432",
		"postgres://u@[::1]:6000/x":                                     "[::1]:6000",
		"postgres://u@db.example.com:5432/x":                            "",
		"postgres://u@10.0.0.5:5432/x":                                  "",
		"::not a url":                                                   "",
	} {
		if got := localCluster(in); got != want {
			t.Errorf("localCluster(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestPgStopRefusedWhileRunHolds (issue 44): while a make run of the checkout holds its
// lock, pg.sh stop and destroy refuse, naming the holder, and the cluster keeps running;
// FORCE=1 stops it, and without the lock stop works as before.
func TestPgStopRefusedWhileRunHolds(t *testing.T) {
	state, port := pgScratch(t)
	pg := func(env []string, args ...string) (string, error) {
		cmd := exec.Command("../../scripts/pg.sh", args...)
		cmd.Env = append(append(os.Environ(), "PG_STATE_DIR="+state, "PGPORT="+port, "FORCE=", "PG_STOP_FROM_RUN="), env...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	t.Cleanup(func() { _, _ = pg([]string{"FORCE=1"}, "destroy") })
	if out, err := pg(nil, "start"); err != nil {
		t.Fatalf("start: %v\n%s", err, out)
	}
	lock, err := os.OpenFile(filepath.Join(state, "run.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	if _, err := lock.WriteString("4242\n"); err != nil {
		t.Fatal(err)
	}
	for _, verb := range []string{"stop", "destroy"} {
		out, err := pg(nil, verb)
		if err == nil || !strings.Contains(out, "make run (pid 4242) is using the local Postgres: stop it first") {
			t.Errorf("%s while make run holds the lock: %v\n%s", verb, err, out)
		}
		if out, err := pg(nil, "status"); err != nil {
			t.Fatalf("after a refused %s the cluster is not running: %v\n%s", verb, err, out)
		}
	}
	if out, err := pg([]string{"PG_STOP_FROM_RUN=1"}, "stop"); err != nil || !strings.Contains(out, "stopped the local cluster") {
		t.Errorf("make run's own stop: %v\n%s", err, out)
	}
	if out, err := pg(nil, "start"); err != nil {
		t.Fatalf("restart: %v\n%s", err, out)
	}
	if out, err := pg([]string{"FORCE=1"}, "stop"); err != nil || !strings.Contains(out, "stopped the local cluster") {
		t.Errorf("FORCE=1 stop: %v\n%s", err, out)
	}
	_ = lock.Close() // releases the flock
	if out, err := pg(nil, "start"); err != nil {
		t.Fatalf("restart: %v\n%s", err, out)
	}
	if out, err := pg(nil, "stop"); err != nil || !strings.Contains(out, "stopped the local cluster") {
		t.Errorf("stop without make run: %v\n%s", err, out)
	}
}

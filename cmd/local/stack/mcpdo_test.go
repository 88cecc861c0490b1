package stack_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentpack/gateway/shared/testpeer"
)

// mcpdo runs the MCP Inspector's connection CLI (mcpdo, from the pinned
// @modelcontextprotocol/inspector) with args, its catalog, OAuth store and daemon under
// home, and returns its combined output.
func mcpdo(t *testing.T, home string, args ...string) (string, error) {
	t.Helper()
	dir := testpeer.NPMDir(t)
	bin := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "inspector", "clients", "mcpdo", "build", "mcp-bin.js")
	ctx, cancel := context.WithTimeout(context.Background(), testpeer.Scaled(60*time.Second))
	defer cancel()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, node, append([]string{bin}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_STATE_HOME="+filepath.Join(home, ".state"), "XDG_RUNTIME_DIR="+filepath.Join(home, "run"),
		"DISPLAY=", "WAYLAND_DISPLAY=", "BROWSER=", "NO_COLOR=1", "PATH="+filepath.Dir(node))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// The MCP Inspector's connection CLI (mcpdo) signs in headless: `connect` with only the
// gateway's URL does the MCP authorization discovery and dynamic registration, prints the
// sign-in URL and exits; the member's browser (headless Chromium) allows on the consent
// page and the Inspector's own callback server takes the code; the connection then lists
// and calls tools as the member.
func TestInspectorCLISignsInHeadless(t *testing.T) {
	browser := testpeer.Chromium(t)
	w := newASWorld(t, nil)
	a := w.ws["A"]
	echo := "mcp_" + a.handle + "_echo"
	home := t.TempDir()
	callback := fmt.Sprintf("http://127.0.0.1:%d/oauth/callback", freeLoopbackPort(t))
	t.Setenv("MCP_OAUTH_CALLBACK_URL", callback)
	t.Setenv("MCP_INSPECTOR_SECRET_STORE", "file")
	t.Cleanup(func() { _, _ = mcpdo(t, home, "daemon", "stop") })
	target := w.env.URL + "/mcp/" + a.id

	out, err := mcpdo(t, home, "connect", target, "--transport", "http")
	if err != nil {
		t.Fatalf("mcpdo connect: %v\n%s", err, out)
	}
	authURL := regexp.MustCompile(`http://\S+/oauth/authorize\?\S+`).FindString(out)
	if authURL == "" || !strings.HasPrefix(authURL, w.env.URL+"/") {
		t.Fatalf("mcpdo connect printed no sign-in URL of the gateway's authorization server:\n%s", out)
	}
	if q, _ := url.Parse(authURL); q.Query().Get("redirect_uri") != callback || q.Query().Get("code_challenge_method") != "S256" {
		t.Fatalf("the Inspector's authorization request: %s", authURL)
	}
	allowInChromium(t, w, browser, authURL)

	// The sign-in completes in the Inspector's daemon; showing the connection finishes it.
	deadline := time.Now().Add(testpeer.Scaled(30 * time.Second))
	for {
		out, err = mcpdo(t, home, "connections/show", "@"+target)
		if err == nil && !strings.Contains(out, "not authorized") && !strings.Contains(out, "pending") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the connection never became usable after the sign-in: %v\n%s", err, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
	out, err = mcpdo(t, home, "--format", "json", "--connection", target, "tools/list")
	if err != nil || !strings.Contains(out, `"mcp_`+a.handle+`_`) {
		t.Fatalf("tools/list through the Inspector as the signed-in member: %v\n%s", err, out)
	}
	out, err = mcpdo(t, home, "--format", "json", "--connection", target, "tools/call", echo, "message:=\"from the Inspector\"")
	if err != nil || !strings.Contains(out, "from the Inspector") || strings.Contains(out, `"isError": true`) {
		t.Fatalf("tools/call through the Inspector as the signed-in member: %v\n%s", err, out)
	}
}

package stack_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentpack/gateway/functions/marketplace/authserver"
	"github.com/agentpack/gateway/shared/testpeer"
)

// oauthClientResult is what test/npm/ts-oauth-client.mjs prints on its RESULT line.
type oauthClientResult struct {
	ClientID   string         `json:"clientId"`
	Scope      string         `json:"scope"`
	AuthMethod string         `json:"authMethod"`
	HasSecret  bool           `json:"hasSecret"`
	Tools      []string       `json:"tools"`
	Call       map[string]any `json:"call"`
	// Filled by runOAuthClient: the authorization URL the SDK asked to open, and where the
	// gateway sent the browser back (the redirect URI with code, state, iss).
	Authorize *url.URL `json:"-"`
	Redirect  *url.URL `json:"-"`
}

// runOAuthClient runs test/npm/ts-oauth-client.mjs against mcpURL with env, plays the
// browser of person when the SDK asks to open the authorization URL (consent, then the
// URL the browser was sent back to, to the SDK on stdin), and returns the client's result.
func (w *asWorld) runOAuthClient(t *testing.T, mcpURL, person string, env ...string) *oauthClientResult {
	t.Helper()
	return w.runOAuthClientWith(t, mcpURL, func(authURL string) *url.URL {
		return w.consentRedirect(t, w.browser(t, person), authURL, "http://127.0.0.1:9/callback")
	}, env...)
}

// runOAuthClientWith is runOAuthClient with the browser step given: allow gets the
// authorization URL the SDK asked to open and returns the URL the browser was sent back to.
func (w *asWorld) runOAuthClientWith(t *testing.T, mcpURL string, allow func(authURL string) *url.URL, env ...string) *oauthClientResult {
	t.Helper()
	dir := testpeer.NPMDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), testpeer.Scaled(90*time.Second))
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(dir, "ts-oauth-client.mjs"), mcpURL)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Cancel(); _ = cmd.Wait() }()
	var res *oauthClientResult
	var authz, back *url.URL
	authorized := false
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "AUTHORIZE "):
			authorized = true
			raw := strings.TrimPrefix(line, "AUTHORIZE ")
			authz, _ = url.Parse(raw)
			back = allow(raw)
			if _, err := io.WriteString(stdin, back.String()+"\n"); err != nil {
				t.Fatal(err)
			}
		case strings.HasPrefix(line, "RESULT "):
			res = &oauthClientResult{}
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "RESULT ")), res); err != nil {
				t.Fatalf("RESULT is not JSON: %v: %s", err, line)
			}
		}
	}
	if res == nil {
		t.Fatalf("ts-oauth-client printed no result (authorized: %v)\nstderr:\n%s", authorized, stderr.String())
	}
	if !authorized {
		t.Fatalf("the SDK never asked to open the authorization URL: it connected without signing in")
	}
	res.Authorize, res.Redirect = authz, back
	return res
}

// The official TypeScript SDK client, given only the URL, signs in by itself (dynamic
// registration, then by a Client ID Metadata Document) and lists and calls tools as the
// signed-in member.
func TestTypeScriptSDKSignsInByItself(t *testing.T) {
	docs := http.NewServeMux()
	tlsSrv := httptest.NewTLSServer(docs)
	t.Cleanup(tlsSrv.Close)
	roots := x509.NewCertPool()
	roots.AddCert(tlsSrv.Certificate())
	w := newASWorld(t, func(o *authserver.Options) { o.MetadataRootCAs = roots })
	a := w.ws["A"]
	echo := "mcp_" + a.handle + "_echo"
	mcpURL := w.env.URL + "/mcp/" + a.id

	check := func(t *testing.T, res *oauthClientResult) {
		t.Helper()
		if !hasPrefix(res.Tools, "mcp_"+a.handle+"_") {
			t.Fatalf("tools/list as the signed-in member: %v", res.Tools)
		}
		if isErr, _ := res.Call["isError"].(bool); isErr || res.Call["error"] != nil || res.Call["content"] == nil {
			t.Fatalf("tools/call as the signed-in member: %v", res.Call)
		}
	}
	t.Run("dynamic registration", func(t *testing.T) {
		res := w.runOAuthClient(t, mcpURL, "ada", "MCP_TOOL="+echo, `MCP_TOOL_ARGS={"message":"from the TS SDK"}`)
		if strings.HasPrefix(res.ClientID, "http") || res.ClientID == "" {
			t.Fatalf("client id %q, want a registered one", res.ClientID)
		}
		check(t, res)
	})
	t.Run("client ID metadata document", func(t *testing.T) {
		docURL := tlsSrv.URL + "/ts-client.json"
		docs.HandleFunc("/ts-client.json", func(rw http.ResponseWriter, _ *http.Request) {
			rw.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(rw, `{"client_id":%q,"client_name":"TS SDK by document","redirect_uris":["http://127.0.0.1:9/callback"],
				"grant_types":["authorization_code","refresh_token"],"response_types":["code"],"token_endpoint_auth_method":"none"}`, docURL)
		})
		res := w.runOAuthClient(t, mcpURL, "ada", "MCP_CLIENT_METADATA_URL="+docURL, "MCP_TOOL="+echo,
			`MCP_TOOL_ARGS={"message":"by document"}`)
		if res.ClientID != docURL {
			t.Fatalf("client id %q, want the metadata document's URL %s", res.ClientID, docURL)
		}
		check(t, res)
	})
}

// The official TypeScript SDK client as a confidential client: its provider's
// clientMetadata names client_secret_post (what claude.ai's connectors register with) or
// client_secret_basic; the registration returns a secret and that method, and the SDK
// authenticates its code exchange with them (the server refuses a confidential client's
// token request without its secret, so the tools/list proves the SDK sent it).
func TestTypeScriptSDKConfidentialClient(t *testing.T) {
	w := newASWorld(t, nil)
	a := w.ws["A"]
	mcpURL := w.env.URL + "/mcp/" + a.id
	for _, method := range []string{authserver.AuthMethodSecretPost, authserver.AuthMethodSecretBasic} {
		t.Run(method, func(t *testing.T) {
			res := w.runOAuthClient(t, mcpURL, "ada", "MCP_TOKEN_AUTH_METHOD="+method, "MCP_TOOL=mcp_"+a.handle+"_echo",
				`MCP_TOOL_ARGS={"message":"confidential"}`)
			if res.AuthMethod != method || !res.HasSecret {
				t.Fatalf("registered as %q, secret returned %v; want %s with a secret", res.AuthMethod, res.HasSecret, method)
			}
			if !hasPrefix(res.Tools, "mcp_"+a.handle+"_") || res.Call["content"] == nil {
				t.Fatalf("tools/list and tools/call as the signed-in member: %v %v", res.Tools, res.Call)
			}
			var stored, hash string
			if err := w.env.Pool.QueryRow(t.Context(), `SELECT token_endpoint_auth_method, secret_hash FROM as_clients
				WHERE client_id = $1`, res.ClientID).Scan(&stored, &hash); err != nil || stored != method || hash == "" {
				t.Fatalf("stored client %s: method %q, hash set %v (%v)", res.ClientID, stored, hash != "", err)
			}
		})
	}
}

package stack_test

import (
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/gateway/functions/marketplace/authserver"
	"github.com/agentpack/gateway/shared/testpeer"
	"github.com/agentpack/gateway/shared/urlguard"
)

// mcpURLs are the two kinds of URL a client is given: the banner's workspace URL (the
// protected resource metadata names exactly it) and the gateway-wide /mcp, which the
// gateway keeps accepting (the consent page's workspace chooser picks the workspace).
func mcpURLs(w *asWorld) map[string]string {
	return map[string]string{
		"workspace URL":     w.env.URL + "/mcp/" + w.ws["A"].id,
		"gateway-wide /mcp": w.env.URL + "/mcp",
	}
}

// checkAuthorizeRequest fails unless a client's authorization request carries PKCE S256
// and names the URL it was given as the `resource`.
func checkAuthorizeRequest(t *testing.T, authURL, mcpURL string) url.Values {
	t.Helper()
	u, err := url.Parse(authURL)
	if err != nil {
		t.Fatalf("authorization URL %q: %v", authURL, err)
	}
	q := u.Query()
	if q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" {
		t.Errorf("authorization request without PKCE S256: %v", q)
	}
	if q.Get("resource") != mcpURL {
		t.Errorf("authorization request for resource %q, want the URL the client was given %q", q.Get("resource"), mcpURL)
	}
	return q
}

// The MCP Inspector CLI 2.12 (pinned in test/npm) does OAuth in a terminal: given only the
// URL and no token, it registers itself (RFC 7591), prints "Please navigate to: <authorization
// URL>", listens on its --callback-url, and after the member allows in the browser, runs the
// method. Driven in a pseudo-terminal, as a person runs it.
func TestInspectorCLISignsIn(t *testing.T) {
	node, cli := inspectorCLI(t)
	w := newASWorld(t, nil)
	a := w.ws["A"]
	for name, mcpURL := range mcpURLs(w) {
		t.Run(name, func(t *testing.T) {
			home := t.TempDir()
			callback := fmt.Sprintf("http://127.0.0.1:%d/oauth/callback", freeLoopbackPort(t))
			term := startTerminal(t, home, []string{"HOME=" + home, "XDG_CONFIG_HOME=" + home, "MCP_INSPECTOR_SECRET_STORE=memory", "BROWSER=/bin/false"},
				node, cli, "--cli", mcpURL, "--transport", "http", "--method", "tools/list", "--callback-url", callback)
			authURL := term.waitFor(regexp.MustCompile(`Please navigate to: `+authorizeURLIn.String()), 90*time.Second)[1]
			q := checkAuthorizeRequest(t, authURL, mcpURL)
			if q.Get("redirect_uri") != callback || q.Get("state") == "" {
				t.Fatalf("the Inspector's authorization request: %v", q)
			}
			back := w.allowInBrowser(t, "ada", authURL)
			if back.Query().Get("state") != q.Get("state") {
				t.Fatalf("state %q came back as %q", q.Get("state"), back.Query().Get("state"))
			}
			if err := term.wait(90 * time.Second); err != nil {
				t.Fatalf("the Inspector CLI exited %v:\n%s", err, term.tail())
			}
			if !strings.Contains(term.text(), `"mcp_`+a.handle+`_echo"`) {
				t.Fatalf("the Inspector's tools/list after signing in lacks the workspace's tools:\n%s", term.tail())
			}
		})
	}
}

// claudeCode is Claude Code (npm @anthropic-ai/claude-code, pinned in test/npm): its native
// binary for linux-x64, run with a home of its own and every non-essential call turned off
// (no telemetry, error reports or update checks: the machine has no internet).
type claudeCode struct {
	bin, home string
	env       []string
}

func newClaudeCode(t *testing.T) *claudeCode {
	t.Helper()
	bin := npmBin(t, "@anthropic-ai/claude-code-linux-x64/claude")
	home := t.TempDir()
	return &claudeCode{bin: bin, home: home, env: []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1",
		"DISABLE_ERROR_REPORTING=1", "BROWSER=/bin/false"}}
}

// run runs one non-interactive claude command and returns its combined output.
func (c *claudeCode) run(t *testing.T, args ...string) string {
	t.Helper()
	term := startTerminal(t, c.home, c.env, c.bin, args...)
	err := term.wait(60 * time.Second)
	if err != nil {
		t.Fatalf("claude %s: %v\n%s", strings.Join(args, " "), err, term.tail())
	}
	return term.text()
}

// login starts `claude mcp login <name> --no-browser` and returns the terminal and the
// authorization URL it printed.
func (c *claudeCode) login(t *testing.T, name string) (*terminal, string) {
	t.Helper()
	term := startTerminal(t, c.home, c.env, c.bin, "mcp", "login", name, "--no-browser")
	m := term.waitFor(regexp.MustCompile(`Visit this URL to authorize:\s*`+authorizeURLIn.String()), 60*time.Second)
	return term, m[1]
}

// claudeCodeMetadataDocument is the client_id Claude Code uses when it registers by a
// Client ID Metadata Document (seen in its authorization requests, 2.1.332).
const claudeCodeMetadataDocument = "https://claude.ai/oauth/claude-code-client-metadata"

// Claude Code's `claude mcp add --transport http` then `claude mcp login` with a client
// registered by hand (`--client-id`, `--callback-port`: its redirect URI is then
// http://localhost:<port>/callback): the member allows in the browser, Claude Code's
// callback server takes the code, and `claude mcp get` reports the server connected with
// the token it got.
func TestClaudeCodeLoginPreregistered(t *testing.T) {
	w := newASWorld(t, nil)
	for name, mcpURL := range mcpURLs(w) {
		t.Run(name, func(t *testing.T) {
			c := newClaudeCode(t)
			port := freeLoopbackPort(t)
			redirect := fmt.Sprintf("http://localhost:%d/callback", port)
			client := w.register(t, redirect)
			c.run(t, "mcp", "add", "--transport", "http", "--client-id", client, "--callback-port", fmt.Sprint(port), "agentpack", mcpURL)
			term, authURL := c.login(t, "agentpack")
			q := checkAuthorizeRequest(t, authURL, mcpURL)
			if q.Get("client_id") != client || q.Get("redirect_uri") != redirect || q.Get("state") == "" {
				t.Fatalf("Claude Code's authorization request: %v", q)
			}
			w.allowInBrowser(t, "ada", authURL)
			if err := term.wait(60 * time.Second); err != nil {
				t.Fatalf("claude mcp login exited %v:\n%s", err, term.tail())
			}
			if out := c.run(t, "mcp", "get", "agentpack"); !strings.Contains(out, "Connected") {
				t.Fatalf("claude mcp get after signing in:\n%s", out)
			}
		})
	}
}

// Claude Code with no client id registers by its own Client ID Metadata Document,
// https://claude.ai/oauth/claude-code-client-metadata. Here the gateway cannot fetch it
// (the gateway's resolver answers no name, as with no internet or egress filtering): the
// member's browser gets an HTML page that names the client and why it could not be used,
// and the gateway logs the client id and the reason. The flow stops there, never with raw
// JSON.
func TestClaudeCodeMetadataDocumentUnreachable(t *testing.T) {
	nowhere := testpeer.Resolver(t, nil) // NXDOMAIN for every name
	w := newASWorld(t, func(o *authserver.Options) {
		o.Guard = urlguard.New(&urlguard.Options{AllowPrivate: true, Resolver: nowhere})
	})
	c := newClaudeCode(t)
	mcpURL := w.env.URL + "/mcp/" + w.ws["A"].id
	c.run(t, "mcp", "add", "--transport", "http", "agentpack", mcpURL)
	_, authURL := c.login(t, "agentpack")
	q := checkAuthorizeRequest(t, authURL, mcpURL)
	if q.Get("client_id") != claudeCodeMetadataDocument {
		t.Fatalf("Claude Code's client_id %q, want its metadata document %s", q.Get("client_id"), claudeCodeMetadataDocument)
	}
	resp, err := w.browser(t, "ada").Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	page := string(body)
	if resp.StatusCode < 400 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("authorize with an unreachable metadata document: %d %s, want an HTML error page\n%s",
			resp.StatusCode, resp.Header.Get("Content-Type"), page)
	}
	if !strings.Contains(page, claudeCodeMetadataDocument) || !unreachableReason.MatchString(page) {
		t.Fatalf("the page does not name the client and why its document could not be used:\n%s", page)
	}
	logs := w.env.Logs.String()
	if !strings.Contains(logs, claudeCodeMetadataDocument) || !unreachableReason.MatchString(logs) {
		t.Fatalf("no log line names the client id and the reason:\n%s", tailLogs(w))
	}
}

// unreachableReason matches a message that says a document could not be fetched.
var unreachableReason = regexp.MustCompile(`(?i)unreachable|could not be (fetched|reached)|could not (fetch|reach)|no such host`)

// geminiSettings are gemini-cli's user settings for the tests: an API key sign-in chosen up
// front (so no sign-in dialog: signing in to an MCP server needs no model, and the key
// GEMINI_API_KEY names is never used), folder trust off, and no update checks or usage
// statistics (no internet here).
const geminiSettings = `{"security":{"auth":{"selectedType":"gemini-api-key"},"folderTrust":{"enabled":false}},
"general":{"disableAutoUpdate":true,"disableUpdateNag":true},"privacy":{"usageStatisticsEnabled":false},"telemetry":{"enabled":false}}`

// gemini-cli 0.61 (npm @google/gemini-cli, pinned in test/npm): `gemini mcp add --transport
// http agentpack <URL>` with the banner's URL, then, in its interactive terminal UI,
// `/mcp auth agentpack`. gemini-cli checks the protected resource metadata strictly: the
// document's `resource` must be the URL it was given (or its origin), else "Protected
// resource … does not match expected …". It registers itself (RFC 7591, redirect
// http://localhost:<port>/oauth/callback), asks the person to continue, prints the
// authorization URL; the member allows in the browser; gemini-cli says it authenticated
// and `/mcp list` shows the server's tools.
func TestGeminiCLISignsIn(t *testing.T) {
	bin := npmBin(t, "@google/gemini-cli/bundle/gemini.js")
	w := newASWorld(t, nil)
	for name, mcpURL := range mcpURLs(w) {
		t.Run(name, func(t *testing.T) {
			home := t.TempDir()
			proj := filepath.Join(home, "project")
			if err := os.MkdirAll(filepath.Join(home, ".gemini"), 0o700); err != nil {
				t.Fatal(err)
			}
			_ = os.MkdirAll(proj, 0o700)
			if err := os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), []byte(geminiSettings), 0o600); err != nil {
				t.Fatal(err)
			}
			env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "GEMINI_API_KEY=unused-no-model-call",
				"GEMINI_CLI_NO_RELAUNCH=1", "BROWSER=/bin/false"}
			node := "node"
			add := startTerminal(t, proj, env, node, bin, "mcp", "add", "--transport", "http", "agentpack", mcpURL)
			if err := add.wait(60 * time.Second); err != nil || !strings.Contains(add.text(), `"agentpack" added`) {
				t.Fatalf("gemini mcp add: %v\n%s", err, add.tail())
			}
			term := startTerminal(t, proj, env, node, bin)
			term.waitFor(regexp.MustCompile(`Type your message`), 90*time.Second)
			term.submit("/mcp auth agentpack", regexp.MustCompile(`Starting OAuth authentication for MCP server`))
			term.waitFor(regexp.MustCompile(`Do you want to continue\?|Failed to authenticate.*`), 90*time.Second)
			if m := regexp.MustCompile(`Failed to authenticate[^\n]*`).FindString(term.text()); m != "" {
				t.Fatalf("gemini-cli refused the gateway: %s\n%s", m, term.tail())
			}
			term.typeKeys("\r") // "1. Yes"
			authURL := term.waitFor(regexp.MustCompile(`copy and paste this URL into your browser:\s*`+authorizeURLIn.String()), 60*time.Second)[1]
			q := checkAuthorizeRequest(t, authURL, mcpURL)
			if !strings.HasPrefix(q.Get("redirect_uri"), "http://localhost:") || q.Get("state") == "" {
				t.Fatalf("gemini-cli's authorization request: %v", q)
			}
			w.allowInBrowser(t, "ada", authURL)
			term.waitFor(regexp.MustCompile(`Successfully authenticated with MCP server 'agentpack'`), 60*time.Second)
			// It then reconnects to the server with the token; keys typed before its prompt
			// is back are lost.
			term.waitFor(regexp.MustCompile(`(?s)reloaded tools for 'agentpack'.*Type your message`), 60*time.Second)
			term.submit("/mcp list", regexp.MustCompile(`(?s)reloaded tools for 'agentpack'.*/mcp list.*mcp_`+w.ws["A"].handle+`_echo`))
		})
	}
}

package stack_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentpack/gateway/shared/testpeer"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// mcpRemote is mcp-remote (npm, pinned in test/npm) running as a stdio bridge to one
// gateway URL: the test speaks JSON-RPC lines on its stdin and stdout, as Claude Desktop
// or any stdio-only client does, and reads its log (stderr) for the authorization URL.
type mcpRemote struct {
	stdin  io.Writer
	lines  chan map[string]any
	authz  chan string
	mu     sync.Mutex
	stderr strings.Builder
}

// startMCPRemote starts mcp-remote against mcpURL with its OAuth callback server on
// 127.0.0.1:callbackPort and its token store in a fresh directory. mcp-remote does the
// whole MCP authorization discovery by itself (the 401 challenge, RFC 9728 and RFC 8414
// metadata, RFC 7591 registration, PKCE S256, resource) and, having no desktop to open a
// browser on, prints the authorization URL.
func startMCPRemote(t *testing.T, mcpURL string, callbackPort int) *mcpRemote {
	t.Helper()
	dir := testpeer.NPMDir(t)
	proxy := filepath.Join(dir, "node_modules", "mcp-remote", "dist", "proxy.js")
	if _, err := os.Stat(proxy); err != nil {
		t.Fatalf("mcp-remote is not installed in test/npm (make npm-deps): %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testpeer.Scaled(3*time.Minute))
	node, err := exec.LookPath("node")
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, node, proxy, mcpURL, strconv.Itoa(callbackPort),
		"--host", "127.0.0.1", "--transport", "http-only")
	cmd.Dir = dir
	// No desktop and no opener on PATH (xdg-open, gio, x-www-browser would start a browser
	// of their own): mcp-remote prints the URL, and the test's Chromium opens it.
	cmd.Env = append(os.Environ(), "MCP_REMOTE_CONFIG_DIR="+t.TempDir(), "DISPLAY=", "WAYLAND_DISPLAY=", "BROWSER=",
		"PATH="+t.TempDir())
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	m := &mcpRemote{stdin: stdin, lines: make(chan map[string]any, 16), authz: make(chan string, 1)}
	t.Cleanup(func() {
		_ = cmd.Cancel()
		_ = cmd.Wait()
		cancel()
		if t.Failed() {
			t.Logf("mcp-remote's log:\n%s", m.log())
		}
	})
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 8<<20)
		for sc.Scan() {
			var msg map[string]any
			if json.Unmarshal(sc.Bytes(), &msg) == nil {
				m.lines <- msg
			}
		}
		close(m.lines)
	}()
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		next := false
		for sc.Scan() {
			line := sc.Text()
			m.mu.Lock()
			m.stderr.WriteString(line + "\n")
			m.mu.Unlock()
			if strings.Contains(line, "Please authorize this client by visiting") {
				next = true
				continue
			}
			if next && strings.HasPrefix(strings.TrimSpace(line), "http") {
				next = false
				select {
				case m.authz <- strings.TrimSpace(line):
				default:
				}
			}
		}
	}()
	return m
}

func (m *mcpRemote) log() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.stderr.String()
}

// send writes one JSON-RPC message to mcp-remote's stdin.
func (m *mcpRemote) send(t *testing.T, msg string) {
	t.Helper()
	if _, err := io.WriteString(m.stdin, msg+"\n"); err != nil {
		t.Fatal(err)
	}
}

// answer waits for the response with id on mcp-remote's stdout.
func (m *mcpRemote) answer(t *testing.T, id int) map[string]any {
	t.Helper()
	deadline := time.After(testpeer.Scaled(90 * time.Second))
	for {
		select {
		case msg, ok := <-m.lines:
			if !ok {
				t.Fatalf("mcp-remote closed its stdout before answering id %d", id)
			}
			if v, _ := msg["id"].(float64); int(v) == id && msg["method"] == nil {
				return msg
			}
		case <-deadline:
			t.Fatalf("no answer with id %d from mcp-remote", id)
		}
	}
}

// freeLoopbackPort is a port nothing listens on now, for mcp-remote's callback server.
func freeLoopbackPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// mcp-remote, the stdio bridge Claude Desktop and other stdio-only clients use, given only
// the gateway's URL, signs in through the gateway's own authorization server with its own
// OAuth flow: it registers itself (RFC 7591), and its browser step is a headless Chromium
// in which the member is signed in, which shows the consent page and allows; mcp-remote's
// callback server receives the code, and the member's tools/list and tools/call go through.
func TestMCPRemoteSignsInWithChromium(t *testing.T) {
	browser := testpeer.Chromium(t)
	w := newASWorld(t, nil)
	a := w.ws["A"]
	echo := "mcp_" + a.handle + "_echo"
	port := freeLoopbackPort(t)
	m := startMCPRemote(t, w.env.URL+"/mcp/"+a.id, port)

	var authURL string
	select {
	case authURL = <-m.authz:
	case <-time.After(testpeer.Scaled(90 * time.Second)):
		t.Fatal("mcp-remote never printed an authorization URL")
	}
	u, err := url.Parse(authURL)
	if err != nil || !strings.HasPrefix(authURL, w.env.URL+"/") {
		t.Fatalf("authorization URL %q is not the gateway's own authorization server %s", authURL, w.env.URL)
	}
	q := u.Query()
	wantRedirect := fmt.Sprintf("http://127.0.0.1:%d/oauth/callback", port)
	// The resource is the banner's workspace URL it was given: its protected resource
	// metadata names exactly that URL (RFC 9728 §3.3).
	if q.Get("code_challenge_method") != "S256" || q.Get("redirect_uri") != wantRedirect || q.Get("resource") != w.env.URL+"/mcp/"+a.id {
		t.Fatalf("mcp-remote's authorization request: %v", q)
	}
	if strings.HasPrefix(q.Get("client_id"), "http") || q.Get("client_id") == "" {
		t.Fatalf("client_id %q, want one the gateway registered (RFC 7591)", q.Get("client_id"))
	}

	consentText := allowInChromium(t, w, browser, authURL)
	// The consent page names the client by the name mcp-remote registered and its redirect host.
	if !strings.Contains(consentText, "MCP CLI") || !strings.Contains(consentText, "127.0.0.1") {
		t.Fatalf("the consent page does not name the client and its redirect host:\n%s", consentText)
	}

	m.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"stdio-client","version":"1.0.0"}}}`)
	if init := m.answer(t, 1); init["result"] == nil {
		t.Fatalf("initialize through mcp-remote: %v", init)
	}
	m.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	m.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	list := m.answer(t, 2)
	res, _ := list["result"].(map[string]any)
	tools, _ := res["tools"].([]any)
	var names []string
	for _, x := range tools {
		if tm, ok := x.(map[string]any); ok {
			names = append(names, fmt.Sprint(tm["name"]))
		}
	}
	if !hasPrefix(names, "mcp_"+a.handle+"_") {
		t.Fatalf("tools/list through mcp-remote as the signed-in member: %v", list)
	}
	m.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":%q,"arguments":{"message":"through mcp-remote"}}}`, echo))
	call := m.answer(t, 3)
	cr, _ := call["result"].(map[string]any)
	if cr == nil || cr["isError"] == true || !strings.Contains(fmt.Sprint(cr["content"]), "through mcp-remote") {
		t.Fatalf("tools/call through mcp-remote: %v", call)
	}
}

// allowInChromium is a person's browser step of an OAuth client's flow: headless Chromium
// with ada's session cookie opens authURL (the gateway's authorization endpoint), allows on
// the consent page, and follows the redirect to the client's redirect URI, where the
// client's own callback server takes the code. It returns the consent page's text.
func allowInChromium(t *testing.T, w *asWorld, browser, authURL string) string {
	t.Helper()
	u, err := url.Parse(authURL)
	if err != nil {
		t.Fatal(err)
	}
	wantRedirect := u.Query().Get("redirect_uri")
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(browser), chromedp.NoSandbox,
		chromedp.Headless, chromedp.DisableGPU, chromedp.Flag("disable-dev-shm-usage", true))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelA()
	bctx, cancelB := chromedp.NewContext(actx, chromedp.WithErrorf(func(string, ...any) {}))
	defer cancelB()
	ctx, cancel := context.WithTimeout(bctx, testpeer.Scaled(2*time.Minute))
	defer cancel()
	gw, _ := url.Parse(w.env.URL)
	var consentText, landed string
	err = chromedp.Run(ctx,
		network.SetCookie(testPersonCookie, "ada").WithDomain(gw.Hostname()).WithPath("/"),
		chromedp.Navigate(authURL),
		chromedp.WaitVisible("#allow", chromedp.ByID),
		chromedp.Text("body", &consentText, chromedp.ByQuery),
		// Clicked from the page: the form's navigation must not race the click's own answer.
		chromedp.Evaluate(`setTimeout(() => document.getElementById('allow').click(), 0)`, nil),
	)
	if err != nil {
		t.Fatalf("the browser step: %v", err)
	}
	// The allowed decision redirects the browser to the client's callback server.
	deadline := time.Now().Add(testpeer.Scaled(30 * time.Second))
	for landed == "" || !strings.HasPrefix(landed, wantRedirect) {
		if time.Now().After(deadline) {
			var text string
			_ = chromedp.Run(ctx, chromedp.Text("body", &text, chromedp.ByQuery))
			logs := w.env.Logs.String()
			t.Fatalf("the browser never reached the client's callback %s (at %q)\npage:\n%s\nstack log:\n%s",
				wantRedirect, landed, text, logs[max(0, len(logs)-4000):])
		}
		time.Sleep(50 * time.Millisecond)
		_ = chromedp.Run(ctx, chromedp.Location(&landed))
	}
	return consentText
}

// Command smoke checks a running gateway from outside, as an MCP client and a browser
// would meet it (docs/DEPLOY.md "Smoke test"): `make smoke URL=https://mcp.example.com`.
// It prints one line per check, "ok" or "FAIL" with what is wrong in words, and exits 1
// when any check failed (2 on a bad argument).
//
// The checks, in order (a failed check that later ones need skips them):
//
//  1. health: GET /health answers 200.
//  2. protected resource metadata (RFC 9728 §3): GET /.well-known/oauth-protected-resource/mcp
//     answers JSON naming the resource <URL>/mcp and at least one authorization server.
//  3. authorization server metadata (RFC 8414 §3): the first server's
//     /.well-known/oauth-authorization-server answers JSON whose issuer is that server,
//     with an authorization and a token endpoint and S256 among the PKCE methods.
//  4. unauthenticated call: an MCP initialize without a token answers 401 with a Bearer
//     WWW-Authenticate challenge naming the resource metadata (RFC 9728 §5.1).
//  5. console: GET /admin/ answers 200 with an HTML page.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Result is one check's outcome: Problem is empty when it passed; Skipped when an earlier
// failure made it impossible.
type Result struct {
	Name    string
	Problem string
	Skipped bool
}

// probeWorkspace is the workspace id of the unauthenticated call: any id, since the token
// is checked before the workspace.
const probeWorkspace = "00000000-0000-4000-8000-000000000000"

// maxBody bounds what a check reads of an answer.
const maxBody = 1 << 20

// Check runs the checks against base (an absolute http or https URL, no trailing slash
// needed) with client and returns one Result per check, in order.
func Check(ctx context.Context, client *http.Client, base string) []Result {
	base = strings.TrimRight(base, "/")
	c := checker{ctx: ctx, client: client, base: base}
	var out []Result
	add := func(name, problem string) { out = append(out, Result{Name: name, Problem: problem}) }

	add("health", c.health())
	prm, p := c.resourceMetadata()
	add("protected resource metadata", p)
	if p != "" {
		out = append(out, Result{Name: "authorization server metadata", Skipped: true,
			Problem: "skipped: no authorization server is named (protected resource metadata failed)"})
	} else {
		add("authorization server metadata", c.authServerMetadata(prm.AuthorizationServers[0]))
	}
	add("unauthenticated call", c.unauthenticated())
	add("console", c.console())
	return out
}

type checker struct {
	ctx    context.Context
	client *http.Client
	base   string
}

// get sends a GET (or POST when body is set) and returns status, headers and body; a
// transport error is returned in words.
func (c checker) do(method, u string, body []byte, hdr map[string]string) (int, http.Header, []byte, string) {
	req, err := http.NewRequestWithContext(c.ctx, method, u, bytes.NewReader(body))
	if err != nil {
		return 0, nil, nil, fmt.Sprintf("cannot build a request to %s: %v", u, err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return 0, nil, nil, fmt.Sprintf("%s %s did not answer: %v (is the URL right, and the stack deployed?)", method, u, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	return resp.StatusCode, resp.Header, b, ""
}

func snippet(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

func (c checker) health() string {
	st, _, b, p := c.do(http.MethodGet, c.base+"/health", nil, nil)
	switch {
	case p != "":
		return p
	case st != http.StatusOK:
		return fmt.Sprintf("GET /health answered %d, not 200: the gateway function is failing (its log group shows why; "+
			"a database error here usually means the deploy's migrations did not run): %s", st, snippet(b))
	}
	return ""
}

type resourceMetadata struct {
	Resource             string   `json:"resource"`
	AuthorizationServers []string `json:"authorization_servers"`
}

func (c checker) resourceMetadata() (resourceMetadata, string) {
	var m resourceMetadata
	path := "/.well-known/oauth-protected-resource/mcp"
	st, _, b, p := c.do(http.MethodGet, c.base+path, nil, nil)
	switch {
	case p != "":
		return m, p
	case st != http.StatusOK:
		return m, fmt.Sprintf("GET %s answered %d, not 200: MCP clients cannot discover how to sign in", path, st)
	case json.Unmarshal(b, &m) != nil:
		return m, fmt.Sprintf("GET %s did not answer JSON: %s", path, snippet(b))
	case m.Resource != c.base+"/mcp":
		return m, fmt.Sprintf("the metadata names the resource %q, not %q: PUBLIC_BASE_URL (or CustomDomainName) and the URL you gave differ, "+
			"and clients will refuse tokens for the other one", m.Resource, c.base+"/mcp")
	case len(m.AuthorizationServers) == 0:
		return m, "the metadata names no authorization server: MCP clients cannot sign in " +
			"(the gateway's own server is off without its signing key, AUTH_SIGNING_KMS_KEY_ID, or set AuthServerUrl)"
	}
	if u, err := url.Parse(m.AuthorizationServers[0]); err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return m, fmt.Sprintf("the metadata's authorization server %q is not an absolute URL", m.AuthorizationServers[0])
	}
	return m, ""
}

type authServerMetadata struct {
	Issuer                        string   `json:"issuer"`
	AuthorizationEndpoint         string   `json:"authorization_endpoint"`
	TokenEndpoint                 string   `json:"token_endpoint"`
	CodeChallengeMethodsSupported []string `json:"code_challenge_methods_supported"`
}

// authServerMetadata reads issuer's RFC 8414 metadata: the well-known path inserted
// between the host and the issuer's path (§3.1).
func (c checker) authServerMetadata(issuer string) string {
	u, _ := url.Parse(issuer)
	mu := u.Scheme + "://" + u.Host + "/.well-known/oauth-authorization-server" + strings.TrimRight(u.Path, "/")
	st, _, b, p := c.do(http.MethodGet, mu, nil, nil)
	var m authServerMetadata
	switch {
	case p != "":
		return p
	case st != http.StatusOK:
		return fmt.Sprintf("GET %s answered %d, not 200: the authorization server %s publishes no metadata", mu, st, issuer)
	case json.Unmarshal(b, &m) != nil:
		return fmt.Sprintf("GET %s did not answer JSON: %s", mu, snippet(b))
	case m.Issuer != issuer:
		return fmt.Sprintf("the authorization server's metadata names the issuer %q, not %q (RFC 8414 §3.3): clients will reject it; "+
			"check PUBLIC_BASE_URL / CustomDomainName", m.Issuer, issuer)
	case m.AuthorizationEndpoint == "" || m.TokenEndpoint == "":
		return "the authorization server's metadata lacks the authorization or token endpoint"
	case !slices.Contains(m.CodeChallengeMethodsSupported, "S256"):
		return "the authorization server's metadata does not offer PKCE with S256, which MCP clients require"
	}
	return ""
}

func (c checker) unauthenticated() string {
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},` +
		`"clientInfo":{"name":"agentpack-smoke","version":"1"}}}`)
	st, h, b, p := c.do(http.MethodPost, c.base+"/mcp/"+probeWorkspace, body,
		map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
	if p != "" {
		return p
	}
	if st != http.StatusUnauthorized {
		if st < 300 {
			return fmt.Sprintf("an MCP call without a token answered %d: the endpoint is open to anyone — stop and check the deployment", st)
		}
		return fmt.Sprintf("an MCP call without a token answered %d, not 401: %s", st, snippet(b))
	}
	ch := h.Get("WWW-Authenticate")
	if !strings.HasPrefix(strings.ToLower(ch), "bearer") || !strings.Contains(ch, "resource_metadata=") {
		return fmt.Sprintf("the 401 has no Bearer challenge naming resource_metadata (RFC 9728 §5.1), so clients cannot find "+
			"where to sign in: WWW-Authenticate %q", ch)
	}
	return ""
}

func (c checker) console() string {
	st, h, b, p := c.do(http.MethodGet, c.base+"/admin/", nil, nil)
	switch {
	case p != "":
		return p
	case st != http.StatusOK:
		return fmt.Sprintf("GET /admin/ answered %d, not 200: the console is not served", st)
	case !strings.HasPrefix(h.Get("Content-Type"), "text/html") || !bytes.Contains(bytes.ToLower(b), []byte("<html")):
		return fmt.Sprintf("GET /admin/ did not answer an HTML page (Content-Type %q)", h.Get("Content-Type"))
	}
	return ""
}

// defaultTimeout bounds each request of the command.
const defaultTimeout = 20 * time.Second

// Command conformance-client is the client the official MCP conformance runner
// (@modelcontextprotocol/conformance, `client --suite auth`) drives: it connects to the
// server URL given as its last argument through the gateway's own upstream client
// (shared/mcpclient) with upstream authorization from shared/upstreamauth, lists the tools
// and calls "test-tool".
//
// The scenario comes from MCP_CONFORMANCE_SCENARIO and its context (JSON) from
// MCP_CONFORMANCE_CONTEXT. Authorization-code scenarios consent headlessly: Begin answers the
// authorization URL; the command GETs it (the runner's authorization server redirects at
// once), and hands the redirect to upstreamauth's CallbackHandler — the same handler the
// marketplace function serves at GET /api/oauth/callback — on a loopback listener.
//
// Exit status 0 when the scenario's operations succeeded, 1 otherwise (the runner judges the
// checks; some scenarios expect a failure).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/agentpack/gateway/shared/mcpclient"
	"github.com/agentpack/gateway/shared/upstreamauth"
	"github.com/agentpack/gateway/shared/urlguard"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// clientMetadataURL is the client ID metadata document URL the runner's authorization
// server expects in the basic-cimd scenario (the gateway serves its own in deployment).
const clientMetadataURL = "https://conformance-test.local/client-metadata.json"

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: conformance-client <server-url> (MCP_CONFORMANCE_SCENARIO set)")
		os.Exit(2)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var cfg map[string]any
	if raw := os.Getenv("MCP_CONFORMANCE_CONTEXT"); raw != "" {
		_ = json.Unmarshal([]byte(raw), &cfg)
	}
	if err := run(ctx, log, os.Getenv("MCP_CONFORMANCE_SCENARIO"), os.Args[len(os.Args)-1], cfg); err != nil {
		var cause error
		if fe := (*upstreamauth.FlowError)(nil); errors.As(err, &fe) {
			cause = fe.Err
		}
		log.Error("scenario failed", "scenario", os.Getenv("MCP_CONFORMANCE_SCENARIO"), "err", err, "cause", cause)
		os.Exit(1)
	}
}

func str(m map[string]any, k string) string { s, _ := m[k].(string); return s }

func run(ctx context.Context, log *slog.Logger, scenario, serverURL string, cfg map[string]any) error {
	// Loopback targets are the runner's: local-mode guard (private addresses allowed, the
	// dial-time checks of everything else still on).
	guard := urlguard.New(&urlguard.Options{AllowPrivate: true})
	pool := mcpclient.New(&mcpclient.Options{Guard: guard, Logger: log})
	defer pool.Close()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer ln.Close()
	redirect := "http://" + ln.Addr().String() + "/api/oauth/callback"
	svc := upstreamauth.New(upstreamauth.Options{
		Store:             &upstreamauth.MemoryStore{},
		HTTPClient:        guard.HTTPClient(15 * time.Second),
		CheckURL:          guard.CheckURL,
		RedirectURL:       redirect,
		ClientMetadataURL: clientMetadataURL,
		ClientName:        "agentpack conformance client",
		Logger:            log,
		// The suite's 2025-03-26 back-compatibility scenarios serve no metadata and expect
		// the default endpoints; the gateway itself refuses to guess (docs/UPSTREAM-AUTH.md).
		DefaultEndpoints: true,
	})
	caller := upstreamauth.Caller{WorkspaceID: "conformance", Subject: "conformance-client"}
	key := upstreamauth.Key{ConnectionID: "conformance"}
	mux := http.NewServeMux()
	mux.Handle("GET /api/oauth/callback", svc.CallbackHandler(nil, nil))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()

	if strings.HasPrefix(scenario, "auth/client-credentials") {
		creds := svc.ClientCredentials(key, serverURL, upstreamauth.Client{
			ClientID: str(cfg, "client_id"), ClientSecret: str(cfg, "client_secret"),
			PrivateKeyPEM: str(cfg, "private_key_pem"), SigningAlg: str(cfg, "signing_algorithm"),
		})
		return operations(ctx, pool, mcpclient.Target{ConnectionID: "conformance", URL: serverURL, Credentials: creds})
	}

	if strings.HasPrefix(scenario, "auth/cross-app-access") || strings.HasPrefix(scenario, "auth/enterprise-managed-authorization") {
		// SEP-990: no browser; the IdP's ID token is exchanged for an ID-JAG, then for a token.
		if _, err := svc.EnterpriseGrant(ctx, key, serverURL, upstreamauth.EnterpriseIdP{TokenURL: str(cfg, "idp_token_endpoint"),
			ClientID: str(cfg, "idp_client_id"), IDToken: str(cfg, "idp_id_token")},
			upstreamauth.Client{ClientID: str(cfg, "client_id"), ClientSecret: str(cfg, "client_secret")}); err != nil {
			return err
		}
		return operations(ctx, pool, mcpclient.Target{ConnectionID: "conformance", URL: serverURL, Credentials: svc.Credentials(key)})
	}

	if strings.HasPrefix(scenario, "auth/wif-") {
		// SEP-1933: the runner's workload JWT is the assertion of a JWT bearer grant.
		if _, err := svc.WorkloadGrant(ctx, key, serverURL, str(cfg, "valid_jwt"),
			upstreamauth.Client{ClientID: str(cfg, "client_id"), TokenEndpointAuth: upstreamauth.AuthNone}); err != nil {
			return err
		}
		return operations(ctx, pool, mcpclient.Target{ConnectionID: "conformance", URL: serverURL, Credentials: svc.Credentials(key)})
	}

	var pre *upstreamauth.Client
	if id := str(cfg, "client_id"); id != "" {
		pre = &upstreamauth.Client{ClientID: id, ClientSecret: str(cfg, "client_secret")}
	}
	creds := svc.Credentials(key)
	target := mcpclient.Target{ConnectionID: "conformance", URL: serverURL, Credentials: discovering{creds}}
	authorizations := 0
	for {
		err := operations(ctx, pool, target)
		if err == nil {
			return nil
		}
		ch := creds.Challenge()
		if ch == nil {
			return err
		}
		// One authorization, then at most MaxStepUps step-ups (the retry limit of MCP
		// 2025-11-25 "Step-Up Authorization Flow").
		if authorizations > svc.MaxStepUps() {
			return fmt.Errorf("giving up after %d authorizations: %w", authorizations, err)
		}
		authorizations++
		authURL, berr := svc.Begin(ctx, upstreamauth.BeginRequest{Caller: caller, Key: key, ServerURL: serverURL, Challenge: ch, Client: pre})
		if berr != nil {
			return berr
		}
		if cerr := consent(ctx, authURL); cerr != nil {
			return cerr
		}
		pool.Disconnect("conformance") // a new session with the new token
	}
}

// operations is what every auth scenario's server expects: tools/list, then test-tool.
func operations(ctx context.Context, pool *mcpclient.Pool, t mcpclient.Target) error {
	if _, _, err := pool.ListTools(ctx, t); err != nil {
		return fmt.Errorf("tools/list: %w", err)
	}
	res, err := pool.CallTool(ctx, t, &mcp.CallToolParams{Name: "test-tool", Arguments: map[string]any{}})
	if err != nil {
		return fmt.Errorf("tools/call: %w", err)
	}
	_ = res
	return nil
}

// discovering lets a client without a grant yet talk to the server unauthenticated, so that
// the server's 401 challenge (and its resource_metadata) reaches Begin. The gateway itself
// never does this: without a grant it sends nothing upstream.
type discovering struct{ *upstreamauth.Credentials }

func (d discovering) Token(ctx context.Context) (string, error) {
	t, err := d.Credentials.Token(ctx)
	if errors.Is(err, upstreamauth.ErrAuthorizationRequired) {
		return "", nil
	}
	return t, err
}

// consent plays the user's browser: GET the authorization URL (the runner's authorization
// server consents at once and redirects), then follow that redirect to the callback, which
// is served by upstreamauth.CallbackHandler.
func consent(ctx context.Context, authURL string) error {
	c := &http.Client{Timeout: 15 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(u string) (*http.Response, []byte, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return nil, nil, err
		}
		resp, err := c.Do(req)
		if err != nil {
			return nil, nil, err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return resp, b, nil
	}
	resp, _, err := get(authURL)
	if err != nil {
		return fmt.Errorf("authorization request: %w", err)
	}
	loc := resp.Header.Get("Location")
	if loc == "" {
		return fmt.Errorf("authorization server answered %d without a redirect", resp.StatusCode)
	}
	if _, err := url.Parse(loc); err != nil {
		return fmt.Errorf("authorization server redirect: %w", err)
	}
	resp, body, err := get(loc)
	if err != nil {
		return fmt.Errorf("callback: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("callback answered %d: %s", resp.StatusCode, pageReason(body))
	}
	return nil
}

// pageReason is the reason paragraph of the callback page (for the log).
func pageReason(b []byte) string {
	s := string(b)
	if i := strings.Index(s, "<p>"); i >= 0 {
		s = s[i+3:]
		if j := strings.Index(s, "</p>"); j >= 0 {
			return s[:j]
		}
	}
	return "?"
}

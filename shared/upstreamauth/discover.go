package upstreamauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/text"
	"github.com/agentpack/gateway/shared/urlguard"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// Challenge is what an upstream's 401/403 said (WWW-Authenticate, Bearer scheme).
type Challenge struct {
	ResourceMetadata string   // resource_metadata (RFC 9728 §5.1), "" if absent
	Scopes           []string // scope, split on spaces
	Error            string   // error, e.g. "insufficient_scope"
}

// ParseChallenge reads the WWW-Authenticate headers of resp (nil resp or no header: a zero
// Challenge). A malformed header is an error.
func ParseChallenge(h http.Header) (Challenge, error) {
	var c Challenge
	if h == nil {
		return c, nil
	}
	cs, err := oauthex.ParseWWWAuthenticate(h.Values("WWW-Authenticate"))
	if err != nil {
		return c, err
	}
	for _, ch := range cs {
		if c.ResourceMetadata == "" && ch.Params["resource_metadata"] != "" {
			c.ResourceMetadata = ch.Params["resource_metadata"]
		}
		if ch.Scheme != "bearer" {
			continue
		}
		if c.Scopes == nil && ch.Params["scope"] != "" {
			c.Scopes = strings.Fields(ch.Params["scope"])
		}
		if c.Error == "" {
			c.Error = ch.Params["error"]
		}
	}
	return c, nil
}

// discovery is what discover found: the endpoint (without client identity), the scopes to
// request, and the authorization server's advertised abilities.
type discovery struct {
	ep              Endpoint
	scopes          []string
	cimd            bool
	registration    string
	authMethods     []string
	asScopes        []string
	codeChallengeOK bool
}

// discover runs protected resource metadata discovery (RFC 9728; the challenge's
// resource_metadata, else the path-aware and root well-known URLs), then authorization
// server metadata (RFC 8414 / OIDC in the spec's order via go-sdk), with the 2025-03-26
// fallbacks when either is absent.
func (s *Service) discover(ctx context.Context, serverURL string, ch Challenge, set Settings) (*discovery, error) {
	if err := s.check(serverURL); err != nil {
		return nil, flowErr("discovery", err, "server URL refused: %s", publicMsg(err))
	}
	su, err := url.Parse(serverURL)
	if err != nil {
		return nil, flowErr("discovery", err, "server URL is not a URL")
	}
	var prm *oauthex.ProtectedResourceMetadata
	legacy := false
	for _, c := range prmCandidates(ch.ResourceMetadata, su) {
		if err := s.check(c.url); err != nil {
			return nil, flowErr("discovery", err, "resource metadata URL refused: %s", publicMsg(err))
		}
		doc, found, err := getJSON[oauthex.ProtectedResourceMetadata](ctx, s.http, c.url)
		if err != nil {
			return nil, flowErr("discovery", err, "resource metadata at %s could not be read", c.url)
		}
		if !found {
			continue
		}
		if !sameResource(doc.Resource, c.resource) {
			return nil, flowErr("discovery", ErrResourceMismatch, "resource metadata names resource %q, expected %q", text.Clip(doc.Resource, 200), c.resource)
		}
		if len(doc.AuthorizationServers) == 0 {
			return nil, flowErr("discovery", nil, "resource metadata names no authorization server")
		}
		prm = doc
		break
	}
	if prm == nil {
		// 2025-03-26: the MCP server's origin is the authorization server.
		root := *su
		root.Path, root.RawPath, root.RawQuery, root.Fragment = "", "", "", ""
		prm = &oauthex.ProtectedResourceMetadata{AuthorizationServers: []string{root.String()}, Resource: serverURL}
		legacy = true
	}
	issuer := prm.AuthorizationServers[0]
	if set.Issuer != "" {
		// An admin pinned the authorization server: the resource must name it (when it
		// names any), and its metadata must say it is that issuer.
		if !legacy && !slices.ContainsFunc(prm.AuthorizationServers, func(a string) bool { return sameIssuer(a, set.Issuer) }) {
			return nil, flowErr("discovery", nil, "the resource metadata names authorization server %s, the connection's settings expect issuer %q",
				quoteList(prm.AuthorizationServers), set.Issuer)
		}
		issuer = set.Issuer
		legacy = false
	}
	if err := s.check(issuer); err != nil {
		return nil, flowErr("discovery", err, "authorization server URL refused: %s", publicMsg(err))
	}
	var asm *oauthex.AuthServerMeta
	if set.MetadataURL != "" {
		if err := s.check(set.MetadataURL); err != nil {
			return nil, flowErr("discovery", err, "the configured metadataUrl is refused: %s", publicMsg(err))
		}
		expected := issuer
		if legacy {
			expected = "" // no resource metadata and no pinned issuer: the document names it
		}
		if expected != "" {
			asm, err = oauthex.GetAuthServerMeta(ctx, set.MetadataURL, expected, s.http)
		} else {
			asm, err = metaAt(ctx, s.http, set.MetadataURL)
		}
		if err != nil {
			return nil, flowErr("discovery", err, "authorization server metadata at %s (the configured metadataUrl) is unusable: %s", set.MetadataURL, text.Clip(err.Error(), 300))
		}
		if asm == nil {
			return nil, flowErr("discovery", nil, "no authorization server metadata at %s (the configured metadataUrl)", set.MetadataURL)
		}
		issuer = asm.Issuer
	} else {
		for _, u := range asMetadataURLs(issuer) {
			if err := s.check(u); err != nil {
				return nil, flowErr("discovery", err, "authorization server metadata URL refused: %s", publicMsg(err))
			}
		}
		asm, err = auth.GetAuthServerMetadata(ctx, issuer, s.http)
		if err != nil && legacy {
			// 2025-03-26 servers publish their metadata at their origin's well-known URL whatever
			// issuer it names (the conformance suite's backcompat server names …/oauth). Without
			// protected resource metadata the origin is the only authority there is, so the
			// document it serves is accepted as is; its endpoints are still URL-checked below.
			asm, err = legacyAuthServerMeta(ctx, s.http, issuer)
		}
		if err != nil {
			// go-sdk's reason names both issuers on a mismatch (RFC 8414 §3.3), or the check
			// that failed; it carries no secret (metadata is public).
			return nil, flowErr("discovery", err, "authorization server metadata of %s is unusable: %s", issuer, text.Clip(err.Error(), 300))
		}
	}
	d := &discovery{}
	if asm == nil {
		if !s.defaults {
			return nil, flowErr("discovery", nil, "no authorization server metadata found for %s (tried %s); set the connection's OAuth issuer or metadataUrl",
				issuer, strings.Join(asMetadataURLs(issuer), ", "))
		}
		// 2025-03-26 fallback (Options.DefaultEndpoints): default endpoints at the issuer.
		base := strings.TrimRight(issuer, "/")
		asm = &oauthex.AuthServerMeta{Issuer: issuer, AuthorizationEndpoint: base + "/authorize",
			TokenEndpoint: base + "/token", RegistrationEndpoint: base + "/register"}
		d.codeChallengeOK = true
	} else {
		d.codeChallengeOK = slices.Contains(asm.CodeChallengeMethodsSupported, "S256")
	}
	for _, f := range []struct{ name, v string }{{"authorization_endpoint", asm.AuthorizationEndpoint}, {"token_endpoint", asm.TokenEndpoint}} {
		if f.v == "" {
			return nil, flowErr("discovery", nil, "the authorization server metadata of %s has no %s", issuer, f.name)
		}
	}
	if !d.codeChallengeOK {
		return nil, flowErr("discovery", nil, "authorization server %s does not offer PKCE S256", issuer)
	}
	for _, u := range []string{asm.AuthorizationEndpoint, asm.TokenEndpoint, asm.RegistrationEndpoint, asm.RevocationEndpoint} {
		if u == "" {
			continue
		}
		if err := s.check(u); err != nil {
			return nil, flowErr("discovery", err, "authorization server endpoint refused: %s", publicMsg(err))
		}
	}
	d.ep = Endpoint{Resource: prm.Resource, Issuer: asm.Issuer, AuthURL: asm.AuthorizationEndpoint,
		TokenURL: asm.TokenEndpoint, RevocationURL: asm.RevocationEndpoint,
		IssSupported: asm.AuthorizationResponseIssParameterSupported}
	if r, ok := bakedResource(asm.AuthorizationEndpoint); ok {
		// The server put its own resource in its authorization endpoint (Railway does):
		// that one is sent, once, on every leg (RFC 8707 §2; Begin adds no second one to
		// the authorization URL), so that the code, the token and every refresh name the
		// same resource.
		d.ep.Resource = r
	}
	d.cimd = asm.ClientIDMetadataDocumentSupported
	d.registration = asm.RegistrationEndpoint
	d.authMethods = asm.TokenEndpointAuthMethodsSupported
	d.asScopes = asm.ScopesSupported
	// Scopes: the challenge's, else the resource's scopes_supported, else none (MCP
	// 2025-11-25 "Scope Selection Strategy"); offline_access when the server offers it
	// (SEP-2207: the gateway stores refresh tokens sealed).
	// Scopes an admin configured (the OAuth settings' scopes, else the pre-registered
	// client's: configuredScopes) replace both for a first authorization; a step-up
	// challenge's scopes are still added (Service.Begin).
	d.scopes = slices.Clone(ch.Scopes)
	if len(d.scopes) == 0 {
		d.scopes = slices.Clone(prm.ScopesSupported)
	}
	if len(set.Scopes) > 0 {
		d.scopes = requestedScopes(set.Scopes, ch)
	}
	d.scopes = d.withOffline(d.scopes)
	return d, nil
}

// withOffline returns scopes with offline_access added when the authorization server
// offers it (SEP-2207: the gateway stores refresh tokens sealed) and it is not there yet.
func (d *discovery) withOffline(scopes []string) []string {
	if slices.Contains(d.asScopes, "offline_access") && !slices.Contains(scopes, "offline_access") {
		return append(slices.Clone(scopes), "offline_access")
	}
	return scopes
}

// requestedScopes are the scopes to ask for when an admin configured some (configured, not
// empty): exactly those — not the resource's scopes_supported nor a first 401's scope, which
// may name every scope the server has (issue 34: a Gmail client configured for
// gmail.readonly was sent to consent to everything) — plus, for a step-up (a 403
// insufficient_scope challenge, MCP 2025-11-25 "Step-Up Authorization Flow"), the scopes
// that challenge names.
func requestedScopes(configured []string, ch Challenge) []string {
	out := slices.Clone(configured)
	if ch.Error == "insufficient_scope" {
		out = union(out, ch.Scopes)
	}
	return out
}

// configuredScopes are the scopes an admin configured for an authorization: the OAuth
// settings' scopes when set (they win), else the pre-registered client's; nil for none.
func configuredScopes(set Settings, c *Client) []string {
	if len(set.Scopes) > 0 {
		return set.Scopes
	}
	if c != nil && len(c.Scopes) > 0 {
		return c.Scopes
	}
	return nil
}

// sameResource reports whether a protected resource metadata document's resource (got)
// names the resource want (RFC 9728 §3.3): the same string, or the same origin where one
// has an empty path and the other "/" (RFC 3986 §6.2.3: "http://h:1" and "http://h:1/" are
// one resource). Any other difference, a trailing slash on a longer path included
// ("…/mcp" and "…/mcp/"), is another resource.
func sameResource(got, want string) bool {
	if got == want {
		return true
	}
	g, err1 := url.Parse(got)
	w, err2 := url.Parse(want)
	if err1 != nil || err2 != nil || g.Opaque != "" || w.Opaque != "" || g.Host == "" {
		return false
	}
	for _, u := range []*url.URL{g, w} {
		if u.Path == "" && u.RawPath == "" {
			u.Path = "/"
		}
	}
	return g.String() == w.String()
}

// bakedResource is the resource query parameter an authorization endpoint URL already
// carries (the first, when there are several), and whether it has one.
func bakedResource(endpoint string) (string, bool) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return "", false
	}
	v, ok := u.Query()["resource"]
	if !ok || len(v) == 0 {
		return "", false
	}
	return v[0], true
}

type prmCandidate struct{ url, resource string }

// prmCandidates are the protected resource metadata URLs to try, in the spec's order, each
// with the resource its document must name (RFC 9728 §3.3).
func prmCandidates(fromChallenge string, su *url.URL) []prmCandidate {
	var out []prmCandidate
	if fromChallenge != "" {
		out = append(out, prmCandidate{fromChallenge, su.String()})
	}
	mu := *su
	mu.RawQuery, mu.Fragment, mu.RawPath = "", "", ""
	if p := strings.Trim(su.Path, "/"); p != "" {
		mu.Path = "/.well-known/oauth-protected-resource/" + p
		out = append(out, prmCandidate{mu.String(), su.String()})
	}
	mu.Path = "/.well-known/oauth-protected-resource"
	root := *su
	root.Path, root.RawPath, root.RawQuery, root.Fragment = "", "", "", ""
	out = append(out, prmCandidate{mu.String(), root.String()})
	return out
}

// asMetadataURLs are the authorization server metadata URLs go-sdk's GetAuthServerMetadata
// tries (MCP 2025-11-25 "Authorization Server Metadata Discovery"), listed here so that
// each is checked by the URL guard before go-sdk fetches it.
func asMetadataURLs(issuer string) []string {
	u, err := url.Parse(issuer)
	if err != nil {
		return nil
	}
	p := strings.Trim(u.Path, "/")
	mk := func(path string) string { c := *u; c.Path = path; return c.String() }
	if p == "" {
		return []string{mk("/.well-known/oauth-authorization-server"), mk("/.well-known/openid-configuration")}
	}
	return []string{mk("/.well-known/oauth-authorization-server/" + p), mk("/.well-known/openid-configuration/" + p),
		mk("/" + p + "/.well-known/openid-configuration")}
}

// getJSON GETs url and decodes a JSON document of at most 1 MiB. found is false for a 4xx
// answer (the document is not there); any other failure is an error.
func getJSON[T any](ctx context.Context, c *http.Client, u string) (_ *T, found bool, _ error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, false, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return nil, false, err
	}
	defer resp.Body.Close()
	defer io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode >= 400 && resp.StatusCode < 500 {
		return nil, false, nil
	}
	if resp.StatusCode != http.StatusOK {
		return nil, false, fmt.Errorf("status %d", resp.StatusCode)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "application/json" {
		return nil, false, fmt.Errorf("content type %q is not application/json", text.Clip(resp.Header.Get("Content-Type"), 200))
	}
	var v T
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&v); err != nil {
		return nil, false, err
	}
	return &v, true, nil
}

// publicMsg is the client-safe text of a URL guard refusal.
func publicMsg(err error) string {
	if e := apperr.As(err); e != nil {
		return e.Message
	}
	var be *urlguard.BlockedError
	if errors.As(err, &be) {
		return be.Reason
	}
	return "not allowed"
}

// legacyAuthServerMeta reads <origin>/.well-known/oauth-authorization-server without the
// RFC 8414 §3.3 issuer comparison (2025-03-26 discovery; see discover). nil, nil when absent.
func legacyAuthServerMeta(ctx context.Context, c *http.Client, origin string) (*oauthex.AuthServerMeta, error) {
	return metaAt(ctx, c, strings.TrimRight(origin, "/")+"/.well-known/oauth-authorization-server")
}

// sameIssuer compares two issuer identifiers, ignoring one trailing slash.
func sameIssuer(a, b string) bool { return strings.TrimSuffix(a, "/") == strings.TrimSuffix(b, "/") }

func quoteList(l []string) string {
	q := make([]string, len(l))
	for i, x := range l {
		q[i] = fmt.Sprintf("%q", text.Clip(x, 200))
	}
	return strings.Join(q, ", ")
}

// metaAt reads the authorization server metadata document at u without an issuer
// comparison (nil, nil when absent), its endpoints' schemes checked.
func metaAt(ctx context.Context, c *http.Client, u string) (*oauthex.AuthServerMeta, error) {
	asm, found, err := getJSON[oauthex.AuthServerMeta](ctx, c, u)
	if err != nil || !found {
		return nil, err
	}
	for _, e := range []string{asm.AuthorizationEndpoint, asm.TokenEndpoint, asm.RegistrationEndpoint, asm.RevocationEndpoint} {
		if pu, err := url.Parse(e); err != nil || (e != "" && pu.Scheme != "https" && pu.Scheme != "http") {
			return nil, fmt.Errorf("endpoint %q has a disallowed scheme", text.Clip(e, 200))
		}
	}
	return asm, nil
}

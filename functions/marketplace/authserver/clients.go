package authserver

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/urlguard"
	"github.com/ory/fosite"
)

// Bounds of a Client ID Metadata Document fetch and of a registration.
const (
	maxMetadataBytes = 16 << 10 // a metadata document is a few hundred bytes
	metadataTimeout  = 5 * time.Second
	metadataTTL      = 5 * time.Minute
	metadataCacheMax = 1000
	maxRedirectURIs  = 20
	maxNameLen       = 200
)

// Scope is the one scope of the gateway's resource: access to its MCP endpoint as the
// signed-in member (what the member may do there is their role's).
const Scope = "mcp"

// client is a fosite client with what the consent page shows.
type client struct {
	fosite.DefaultClient
	Name      string
	LogoURI   string
	ClientURI string
	// Document is true for a client whose client_id is its metadata document's URL.
	Document bool
	// firstParty is the console (console.go): no consent, the REST resource only.
	firstParty bool
	// authMethod is a registered client's token endpoint auth method ("": none;
	// registration.go).
	authMethod string
}

func newClient(id string, redirects []string) *client {
	return &client{DefaultClient: fosite.DefaultClient{ID: id, RedirectURIs: redirects, Public: true,
		GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"},
		Scopes: []string{Scope}}}
}

// clients finds clients: registered ones in Postgres, metadata-document ones by fetching
// their client_id through the URL guard (cached for metadataTTL).
type clients struct {
	pool  *db.Pool
	guard *urlguard.Guard
	http  *http.Client
	now   func() time.Time

	mu    sync.Mutex
	cache map[string]cachedDoc
}

type cachedDoc struct {
	c       *client
	fetched time.Time
}

// get returns client id, or fosite.ErrInvalidClient with a hint saying why.
func (cs *clients) get(ctx context.Context, id string) (fosite.Client, error) {
	if id == ConsoleClientID {
		return consoleClient(ctx)
	}
	if isDocumentID(id) {
		return cs.document(ctx, id)
	}
	row, err := db.ASClientGet(ctx, cs.pool, id)
	if apperr.CodeOf(err) == apperr.NotFound {
		return nil, refuseClient(id, "The client is not registered here (register it at "+RegisterPath+", or use a client ID metadata document URL).")
	} else if err != nil {
		return nil, err
	}
	return clientFromRow(row), nil
}

// isDocumentID reports whether a client_id is a metadata document URL (an http(s) URL;
// plain http is refused later unless private addresses are allowed).
func isDocumentID(id string) bool {
	return strings.HasPrefix(id, "https://") || strings.HasPrefix(id, "http://")
}

// document returns the client whose metadata document is at id (Client ID Metadata
// Documents, MCP 2025-11-25 "Client ID Metadata Documents"): fetched through the URL guard
// (no redirects, private addresses refused unless allowed), at most maxMetadataBytes within
// metadataTimeout; its client_id must equal the URL and it must list redirect_uris.
func (cs *clients) document(ctx context.Context, id string) (*client, error) {
	cs.mu.Lock()
	if d, ok := cs.cache[id]; ok && cs.now().Sub(d.fetched) < metadataTTL {
		cs.mu.Unlock()
		return d.c, nil
	}
	cs.mu.Unlock()
	c, err := cs.fetch(ctx, id)
	if err != nil {
		return nil, refuseClient(id, "The client metadata document at "+id+" could not be used: "+err.Error()+".")
	}
	cs.mu.Lock()
	if len(cs.cache) >= metadataCacheMax {
		clear(cs.cache) // a flood of ids costs a refetch, not memory
	}
	cs.cache[id] = cachedDoc{c: c, fetched: cs.now()}
	cs.mu.Unlock()
	return c, nil
}

func (cs *clients) fetch(ctx context.Context, id string) (*client, error) {
	u, err := url.Parse(id)
	if err != nil || u.Host == "" || u.Fragment != "" || u.User != nil || u.Path == "" || u.Path == "/" {
		return nil, errors.New("client_id must be an https URL with a path")
	}
	if u.Scheme != "https" && !(u.Scheme == "http" && cs.guard.Options().AllowPrivate) {
		return nil, errors.New("client_id must be an https URL")
	}
	if err := cs.guard.CheckURL(id); err != nil {
		return nil, errors.New(apperr.Public(err).Message)
	}
	ctx, cancel := context.WithTimeout(ctx, metadataTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, id, nil)
	if err != nil {
		return nil, errors.New("client_id is not a valid URL")
	}
	req.Header.Set("Accept", "application/json")
	resp, err := cs.http.Do(req)
	if err != nil {
		if errors.Is(err, urlguard.ErrBlockedAddress) {
			return nil, errors.New("its address is not allowed")
		}
		if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
			return nil, errors.New("fetching it timed out")
		}
		return nil, errors.New("it could not be fetched")
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetching it answered HTTP %d", resp.StatusCode)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "application/json" {
		return nil, errors.New("it is not application/json")
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadataBytes+1))
	if err != nil {
		if ctx.Err() != nil {
			return nil, errors.New("fetching it timed out")
		}
		return nil, errors.New("it could not be read")
	}
	if len(body) > maxMetadataBytes {
		return nil, fmt.Errorf("it is larger than %d bytes", maxMetadataBytes)
	}
	var md clientMetadata
	if err := json.Unmarshal(body, &md); err != nil {
		return nil, errors.New("it is not a JSON object of client metadata")
	}
	if md.ClientID != id {
		return nil, errors.New("its client_id is not its own URL")
	}
	if err := md.check(); err != nil {
		return nil, err
	}
	if m := md.TokenEndpointAuthMethod; m != "" && m != "none" {
		return nil, fmt.Errorf("token_endpoint_auth_method %q is not supported (public clients only: none)", m)
	}
	c := newClient(id, md.RedirectURIs)
	c.Name, c.LogoURI, c.ClientURI, c.Document = md.ClientName, md.LogoURI, md.ClientURI, true
	return c, nil
}

// clientMetadata is RFC 7591 §2 client metadata, the fields this server reads.
type clientMetadata struct {
	ClientID                string   `json:"client_id,omitempty"`
	RedirectURIs            []string `json:"redirect_uris"`
	ClientName              string   `json:"client_name,omitempty"`
	ClientURI               string   `json:"client_uri,omitempty"`
	LogoURI                 string   `json:"logo_uri,omitempty"`
	GrantTypes              []string `json:"grant_types,omitempty"`
	ResponseTypes           []string `json:"response_types,omitempty"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method,omitempty"`
	Scope                   string   `json:"scope,omitempty"`
	SoftwareID              string   `json:"software_id,omitempty"`
	SoftwareVersion         string   `json:"software_version,omitempty"`
}

// check validates redirect URIs, grant and response types, name and URLs (RFC 7591 §2,
// OAuth 2.1 §2.3.1: absolute, no fragment; http only for a loopback host, RFC 8252 §7.3;
// private-use schemes allowed for native apps, RFC 8252 §7.1).
func (md *clientMetadata) check() error {
	if len(md.RedirectURIs) == 0 {
		return redirectError{errors.New("redirect_uris is required")}
	}
	if len(md.RedirectURIs) > maxRedirectURIs {
		return redirectError{fmt.Errorf("redirect_uris lists more than %d URIs", maxRedirectURIs)}
	}
	for _, r := range md.RedirectURIs {
		if err := checkRedirect(r); err != nil {
			return redirectError{err}
		}
	}
	for _, g := range md.GrantTypes {
		if g != "authorization_code" && g != "refresh_token" {
			return fmt.Errorf("grant type %q is not supported", g)
		}
	}
	for _, rt := range md.ResponseTypes {
		if rt != "code" {
			return fmt.Errorf("response type %q is not supported", rt)
		}
	}
	if len(md.ClientName) > maxNameLen {
		return fmt.Errorf("client_name is longer than %d characters", maxNameLen)
	}
	for k, v := range map[string]string{"logo_uri": md.LogoURI, "client_uri": md.ClientURI} {
		if v == "" {
			continue
		}
		u, err := url.Parse(v)
		if err != nil || u.Scheme != "https" || u.Host == "" || len(v) > 2048 {
			return fmt.Errorf("%s must be an https URL", k)
		}
	}
	return nil
}

func checkRedirect(r string) error {
	u, err := url.Parse(r)
	if err != nil || !u.IsAbs() || u.Fragment != "" || len(r) > 2048 {
		return fmt.Errorf("redirect URI %q is not an absolute URI without a fragment", r)
	}
	switch u.Scheme {
	case "https":
		if u.Host == "" {
			return fmt.Errorf("redirect URI %q has no host", r)
		}
	case "http":
		if !isLoopback(u.Hostname()) {
			return fmt.Errorf("redirect URI %q: http is allowed for a loopback host only", r)
		}
	case "javascript", "data", "file", "vbscript":
		return fmt.Errorf("redirect URI %q has a forbidden scheme", r)
	}
	return nil
}

// redirectError is a check failure of the redirect URIs: registration answers it as
// invalid_redirect_uri (RFC 7591 §3.2.2), every other metadata failure as
// invalid_client_metadata.
type redirectError struct{ error }

func (e redirectError) Unwrap() error { return e.error }

func isLoopback(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

func randomID() string {
	b := make([]byte, 18)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

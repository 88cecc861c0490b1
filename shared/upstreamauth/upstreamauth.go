package upstreamauth

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"
)

// Mode is how a connection authorizes upstream.
type Mode string

// The auth modes of a connection (and the default of a catalog entry).
const (
	ModeNone              Mode = "none"               // nothing is sent
	ModeHeaders           Mode = "headers"            // the connection's declared static headers
	ModeOAuth             Mode = "oauth"              // one consent per connection, shared by its workspace
	ModeOAuthPerUser      Mode = "oauth_per_user"     // each caller consents with their own account
	ModeClientCredentials Mode = "client_credentials" // machine to machine (RFC 6749 §4.4)
)

// Valid reports whether m is one of the five modes.
func (m Mode) Valid() bool {
	switch m {
	case ModeNone, ModeHeaders, ModeOAuth, ModeOAuthPerUser, ModeClientCredentials:
		return true
	}
	return false
}

// OAuth reports whether m uses OAuth tokens (oauth, oauth_per_user, client_credentials).
func (m Mode) OAuth() bool {
	return m == ModeOAuth || m == ModeOAuthPerUser || m == ModeClientCredentials
}

// Token endpoint authentication methods (RFC 7591 §2, RFC 7523).
const (
	AuthNone              = "none"
	AuthClientSecretBasic = "client_secret_basic"
	AuthClientSecretPost  = "client_secret_post"
	AuthPrivateKeyJWT     = "private_key_jwt"
)

// StateTTL is how long an authorization URL (its state) stays valid.
const StateTTL = 10 * time.Minute

// RefreshSkew is how long before its expiry an access token is refreshed.
const RefreshSkew = 60 * time.Second

// Client is a pre-registered OAuth client (per catalog entry or connection). The zero value
// means "none": the client ID metadata document or dynamic registration is used.
type Client struct {
	ClientID string `json:"clientId"`
	// ClientSecret is a secret: stored sealed, never returned.
	ClientSecret string `json:"clientSecret,omitempty"`
	// TokenEndpointAuth is none, client_secret_basic, client_secret_post or private_key_jwt;
	// "" picks from the authorization server's metadata (post, then basic).
	TokenEndpointAuth string `json:"tokenEndpointAuth,omitempty"`
	// PrivateKeyPEM is the PKCS#8 key for private_key_jwt (a secret).
	PrivateKeyPEM string `json:"privateKeyPem,omitempty"`
	// SigningAlg is the JWS algorithm for private_key_jwt: ES256 (default) or RS256.
	SigningAlg string `json:"signingAlg,omitempty"`
	// Issuer, when set, binds the client to one authorization server (SEP-2352).
	Issuer string `json:"issuer,omitempty"`
	// TokenURL is the token endpoint for client_credentials when discovery is not wanted.
	TokenURL string `json:"tokenUrl,omitempty"`
	// Scopes requested by client_credentials.
	Scopes []string `json:"scopes,omitempty"`
}

// Caller is who started or finishes a flow: a workspace and a subject (the JWT sub).
type Caller struct {
	WorkspaceID string `json:"workspaceId"`
	Subject     string `json:"subject"`
}

// Key names one grant: a connection, and for oauth_per_user the subject ("" for a
// connection-wide grant).
type Key struct {
	ConnectionID string `json:"connectionId"`
	Subject      string `json:"subject,omitempty"`
}

func (k Key) String() string { return k.ConnectionID + "|" + k.Subject }

// Pending is one started authorization, kept under its state until the callback (at most
// StateTTL). Verifier and ClientSecret are secrets.
type Pending struct {
	State       string    `json:"state"`
	Caller      Caller    `json:"caller"`
	Key         Key       `json:"key"`
	ServerURL   string    `json:"serverUrl"`
	Verifier    string    `json:"verifier"`
	ExpiresAt   time.Time `json:"expiresAt"`
	Endpoint    Endpoint  `json:"endpoint"`
	Scopes      []string  `json:"scopes,omitempty"`
	RedirectURL string    `json:"redirectUrl"`
	// ReturnTo is where the callback page links back to ("" for none).
	ReturnTo string `json:"returnTo,omitempty"`
	// AuthURL is the authorization server's URL for this flow (state, PKCE challenge,
	// resource, scopes): what the consent page redirects to once the browser is the caller.
	AuthURL string `json:"authUrl,omitempty"`
	// Link is the consent link id (Options.ConsentURL + Link is what the caller receives);
	// "" when the Service has no consent page.
	Link string `json:"link,omitempty"`
	// BindingHash is the SHA-256 of the browser binding the consent page set (nil: the
	// page has not let any browser through yet). Kept by the store beside the sealed value.
	BindingHash []byte `json:"-"`
	// Replaced is set by Store.PendingByLink on a link a newer one of the same caller
	// replaced; such a Pending carries only Key.ConnectionID, Caller and ExpiresAt.
	Replaced bool `json:"-"`
}

// Endpoint is what discovery found for one upstream and the client identity used with it.
type Endpoint struct {
	Resource      string `json:"resource"` // RFC 8707 resource, the protected resource's id
	Issuer        string `json:"issuer"`
	AuthURL       string `json:"authUrl"`
	TokenURL      string `json:"tokenUrl"`
	RevocationURL string `json:"revocationUrl,omitempty"`
	IssSupported  bool   `json:"issSupported,omitempty"` // RFC 9207 iss advertised
	ClientID      string `json:"clientId"`
	ClientSecret  string `json:"clientSecret,omitempty"` // secret
	AuthMethod    string `json:"authMethod"`             // none | client_secret_basic | client_secret_post | private_key_jwt
	Registration  string `json:"registration"`           // cimd | preregistered | dynamic
}

// Grant is a stored authorization: tokens (secrets) plus what is needed to refresh and
// revoke them, and who authorized it when.
type Grant struct {
	Key          Key       `json:"key"`
	Endpoint     Endpoint  `json:"endpoint"`
	AccessToken  string    `json:"accessToken"`
	RefreshToken string    `json:"refreshToken,omitempty"`
	TokenType    string    `json:"tokenType,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
	Scopes       []string  `json:"scopes,omitempty"`
	AuthorizedBy string    `json:"authorizedBy"`
	AuthorizedAt time.Time `json:"authorizedAt"`
	// NeedsReauth is set when a refresh was refused: the grant stays for status and revoke,
	// but yields no token.
	NeedsReauth bool   `json:"needsReauth,omitempty"`
	Reason      string `json:"reason,omitempty"` // why NeedsReauth (no secret in it)
}

// Authorization is the public state of one grant, as connection status shows it.
type Authorization string

// The authorization states of docs/DESIGN.md §6c: a usable grant, none yet, or one that cannot be
// refreshed any more.
const (
	Authorized Authorization = "authorized"
	Required   Authorization = "required"
	Expired    Authorization = "expired"
)

// Status is a grant as connection status shows it: no token in it.
type Status struct {
	Authorization Authorization `json:"authorization"`
	AuthorizedBy  string        `json:"authorizedBy,omitempty"`
	AuthorizedAt  *time.Time    `json:"authorizedAt,omitempty"`
	ExpiresAt     *time.Time    `json:"expiresAt,omitempty"`
	Scopes        []string      `json:"scopes,omitempty"`
	Reason        string        `json:"reason,omitempty"`
}

// StatusOf is the public status of g (nil: Required).
func StatusOf(g *Grant) Status {
	if g == nil {
		return Status{Authorization: Required}
	}
	at := g.AuthorizedAt
	s := Status{Authorization: Authorized, AuthorizedBy: g.AuthorizedBy, AuthorizedAt: &at, Scopes: g.Scopes}
	if !g.Expiry.IsZero() {
		e := g.Expiry
		s.ExpiresAt = &e
	}
	if g.NeedsReauth {
		s.Authorization = Expired
		s.Reason = g.Reason
	}
	return s
}

// Errors callers test with errors.Is.
var (
	// ErrStateUnknown: the state is not (or no longer) stored: never issued, already used, or
	// swept after expiry.
	ErrStateUnknown = errors.New("upstreamauth: unknown or already used state")
	// ErrStateExpired: the state is older than StateTTL.
	ErrStateExpired = errors.New("upstreamauth: authorization link expired")
	// ErrStateForeign: the state belongs to another caller or workspace.
	ErrStateForeign = errors.New("upstreamauth: authorization started by another caller")
	// ErrNoGrant: there is no stored grant for the key.
	ErrNoGrant = errors.New("upstreamauth: not authorized")
	// ErrAuthorizationRequired: no usable token (none yet, or refresh refused); the caller
	// must authorize (again). Nothing was sent upstream.
	ErrAuthorizationRequired = errors.New("upstreamauth: authorization required")
	// ErrResourceMismatch: the protected resource metadata names another resource (RFC 9728 §3.3).
	ErrResourceMismatch = errors.New("upstreamauth: protected resource metadata is for another resource")
	// ErrNotAdmin: the flow is for a connection's shared grant (oauth mode) and the browser's
	// principal is not an admin of its workspace.
	ErrNotAdmin = errors.New("upstreamauth: only an admin of the workspace completes a shared authorization")
	// ErrUnbound: the callback came from a browser that did not pass the consent page as
	// the caller the link was made for (no binding cookie, or another one).
	ErrUnbound = errors.New("upstreamauth: this browser did not open the authorization link as its user")
	// ErrStateReplaced: the consent link's caller has a newer link for the same connection
	// (each unauthorized call replaces the caller's pending authorization).
	ErrStateReplaced = errors.New("upstreamauth: authorization link replaced by a newer one")
	// ErrNoSession: the consent page was opened by a browser with no gateway sign-in.
	ErrNoSession = errors.New("upstreamauth: sign in to open this authorization link")
	// ErrDenied: the authorization server answered the callback with an error (e.g. the user
	// declined).
	ErrDenied = errors.New("upstreamauth: authorization denied")
)

// FlowError is a failed step of the flow with a reason that is safe to show (no token, no
// secret, no verifier in it).
type FlowError struct {
	Step   string // discovery | registration | authorization | exchange | refresh | client_credentials | callback
	Reason string
	Err    error // cause, for logs and errors.Is
}

func (e *FlowError) Error() string {
	return fmt.Sprintf("upstream authorization %s: %s", e.Step, e.Reason)
}
func (e *FlowError) Unwrap() error { return e.Err }

func flowErr(step string, err error, format string, args ...any) *FlowError {
	return &FlowError{Step: step, Reason: fmt.Sprintf(format, args...), Err: err}
}

// Options configures a Service; nil fields mean the defaults named.
type Options struct {
	// Store keeps pending states and grants (required).
	Store Store
	// HTTPClient makes every request of the flow (discovery, registration, token, revoke).
	// The gateway passes the urlguard's client (no redirects, dial-time address checks).
	// Default: a client that follows no redirects.
	HTTPClient *http.Client
	// CheckURL, when set, is applied to every URL of the flow before it is fetched or handed
	// to a browser (urlguard's CheckURL in the gateway).
	CheckURL func(raw string) error
	// RedirectURL is the callback (…/api/oauth/callback), required for authorization code flows.
	RedirectURL string
	// ClientMetadataURL is the https URL where the gateway serves its client ID metadata
	// document ("" disables that client identity).
	ClientMetadataURL string
	// ConsentURL is the gateway page a caller's link opens (docs/UPSTREAM-AUTH.md "Consent
	// bound to its user"): Begin answers ConsentURL + a random link id instead of the
	// authorization server's URL, Consent lets only the caller through (and binds the
	// browser), and the callback completes only in that browser. "" (the conformance client,
	// tests of the flow alone): Begin answers the authorization server's URL and the state
	// alone binds the flow.
	ConsentURL string
	// DefaultEndpoints enables the 2025-03-26 fallback of guessed endpoints (/authorize,
	// /token, /register under the issuer) when no authorization server metadata exists.
	// Off in the gateway (a clear discovery error instead of guessed endpoints); the conformance
	// client turns it on for the back-compatibility scenarios.
	DefaultEndpoints bool
	// ClientName is sent in dynamic registration; default "Agentpack MCP Gateway".
	ClientName string
	// MaxStepUps bounds scope step-up authorizations per operation; default 2.
	MaxStepUps int
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Logger receives flow failures (never a token); nil discards.
	Logger *slog.Logger
}

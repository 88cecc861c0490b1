// Package auth verifies the bearer JWTs of docs/DESIGN.md §8 and answers tenancy questions.
//
// Tokens carry sub, role (member|admin|superuser) and workspaces (ids). Verification is
// HS256 with a shared secret (local, tests) or RS256/ES256 with keys from a JWKS URL
// (e.g. Cognito), with issuer and audience checks when configured. Tokens without exp
// are refused. Browse needs any valid token; writes need admin or superuser; a principal
// acts only inside its own workspaces, a superuser in all.
package auth

import (
	"context"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/agentpack/gateway/shared/apperr"
	"github.com/golang-jwt/jwt/v5"
)

// Roles (docs/DESIGN.md §8).
const (
	RoleMember    = "member"
	RoleAdmin     = "admin"
	RoleSuperuser = "superuser"
)

// Principal is the verified caller.
type Principal struct {
	Subject    string
	Role       string
	Workspaces []string
	// Groups are the caller's identity-provider groups (nil when the sign-in carries none);
	// access policies see them as the principal's Group parents (docs/POLICIES.md).
	Groups []string
	// Grant is the authorization (refresh-token family) an access token issued by the
	// gateway's own authorization server belongs to (its "sid" claim); "" for every other
	// token. The gateway refuses the token once the grant is revoked (docs/AUTH.md).
	Grant string
}

// IsAdmin reports whether p may write (admin or superuser).
func (p *Principal) IsAdmin() bool { return p.Role == RoleAdmin || p.Role == RoleSuperuser }

// RequireAdmin returns nil when p is an admin or superuser (IsAdmin), else an *apperr.Error
// with code FORBIDDEN (HTTP 403) and the message "this action requires the admin role":
// the check every write of the REST API and the connection service starts with
// (docs/DESIGN.md §9, members read, admins write).
func RequireAdmin(p *Principal) error {
	if !p.IsAdmin() {
		return apperr.New(apperr.Forbidden, "this action requires the admin role")
	}
	return nil
}

// IsSuperuser reports whether p may act in every workspace.
func (p *Principal) IsSuperuser() bool { return p.Role == RoleSuperuser }

// InWorkspace reports whether p may act in workspace ws.
func (p *Principal) InWorkspace(ws string) bool {
	return p.IsSuperuser() || slices.Contains(p.Workspaces, ws)
}

// Claims is the JWT claim set.
type Claims struct {
	Role       string   `json:"role"`
	Workspaces []string `json:"workspaces"`
	// Grant ("sid") names the grant of a token the gateway's authorization server issued.
	Grant string `json:"sid,omitempty"`
	// Groups ("groups") are the caller's identity-provider groups: the gateway's own
	// authorization server copies them from the person's last sign-in (docs/AUTH.md
	// "Tokens"), and a JWT_JWKS_URL token's "groups" claim is read alike (Okta and
	// Keycloak name it so). A list of strings, or one string; any other shape refuses the
	// token.
	Groups GroupList `json:"groups,omitempty"`
	jwt.RegisteredClaims
}

// GroupList is the "groups" claim: a JSON list of strings or a single string (some
// identity providers send one group as a plain string).
type GroupList []string

// UnmarshalJSON implements json.Unmarshaler: null (none), a string (one group; "" is none)
// or a list of strings; any other shape (a number, an object, a list holding a non-string)
// is an error, which refuses the token as malformed.
func (g *GroupList) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*g = nil
		return nil
	}
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*g = nil
		if one != "" {
			*g = GroupList{one}
		}
		return nil
	}
	var list []string
	if err := json.Unmarshal(b, &list); err != nil {
		return errors.New("the groups claim is not a list of strings")
	}
	*g = list
	return nil
}

// IssuedKey is the public key of the gateway's own authorization server (docs/AUTH.md):
// tokens whose header kid is KeyID are verified with Key (RS256) and must name their
// resource in aud (VerifyResource).
type IssuedKey struct {
	KeyID  string
	Key    *rsa.PublicKey
	Issuer string // checked when non-empty
}

// Options configure a Verifier. Secret enables HS256; JWKSURL enables RS256/ES256 (keys
// fetched and refreshed by keyfunc). Issuer and Audience are checked when non-empty.
type Options struct {
	Secret   string
	JWKSURL  string
	Issuer   string
	Audience string
	Leeway   time.Duration
	// Issued, when set, also accepts the access tokens of the gateway's own authorization
	// server, through VerifyResource only.
	Issued *IssuedKey
}

// Verifier checks tokens.
type Verifier struct {
	parser *jwt.Parser
	keys   jwt.Keyfunc
	cache  *TokenCache // verified tokens by hash, until expiry (tokencache.go)
	issued *IssuedKey
	plain  bool // HS256 or a JWKS is configured
	// issuedParser checks the authorization server's tokens: RS256, exp required.
	issuedParser *jwt.Parser
}

// ErrInvalidToken is wrapped by every verification failure.
var ErrInvalidToken = errors.New("invalid token")

// NewVerifier builds a verifier. With a JWKS URL it fetches the key set once in the
// background and keeps it refreshed for the life of ctx.
func NewVerifier(ctx context.Context, o Options) (*Verifier, error) {
	var methods []string
	var secretKey, jwksKey jwt.Keyfunc
	if o.Secret != "" {
		methods = append(methods, "HS256")
		secret := []byte(o.Secret)
		secretKey = func(*jwt.Token) (any, error) { return secret, nil }
	}
	if o.JWKSURL != "" {
		methods = append(methods, "RS256", "ES256")
		kf, err := keyfunc.NewDefaultCtx(ctx, []string{o.JWKSURL})
		if err != nil {
			return nil, fmt.Errorf("auth: jwks: %w", err)
		}
		jwksKey = kf.Keyfunc
	}
	if len(methods) == 0 && o.Issued == nil {
		return nil, errors.New("auth: no JWT secret or JWKS URL configured")
	}
	popts := []jwt.ParserOption{jwt.WithValidMethods(methods), jwt.WithExpirationRequired(),
		jwt.WithLeeway(o.Leeway)}
	if o.Issuer != "" {
		popts = append(popts, jwt.WithIssuer(o.Issuer))
	}
	if o.Audience != "" {
		popts = append(popts, jwt.WithAudience(o.Audience))
	}
	var issuedParser *jwt.Parser
	if o.Issued != nil {
		iopts := []jwt.ParserOption{jwt.WithValidMethods([]string{"RS256"}), jwt.WithExpirationRequired(),
			jwt.WithLeeway(o.Leeway)}
		if o.Issued.Issuer != "" {
			iopts = append(iopts, jwt.WithIssuer(o.Issued.Issuer))
		}
		issuedParser = jwt.NewParser(iopts...)
	}
	return &Verifier{
		cache:  NewTokenCache(DefaultTokenCacheSize),
		issued: o.Issued, issuedParser: issuedParser, plain: len(methods) > 0,
		parser: jwt.NewParser(popts...),
		keys: func(t *jwt.Token) (any, error) {
			if t.Method.Alg() == "HS256" {
				if secretKey == nil {
					return nil, errors.New("HS256 not accepted")
				}
				return secretKey(t)
			}
			if jwksKey == nil {
				return nil, errors.New("asymmetric tokens not accepted")
			}
			return jwksKey(t)
		},
	}, nil
}

// Verify parses and checks token and returns its principal. A token verified before is
// answered from the verifier's TokenCache (by its hash, until it expires). Every failure is
// an *apperr.Error with code UNAUTHENTICATED wrapping ErrInvalidToken whose message says
// which (the full reason is in the cause, for logs): "token expired at <RFC 3339 time>"
// (a valid token past its exp), or "invalid token: <what>" — not a JWT, a signature this
// gateway does not accept, not valid yet, wrong issuer or audience, no exp — each with a
// hint saying what to do. The message carries no part of the token; it is what an edge
// puts in WWW-Authenticate's error_description (RFC 6750 §3).
//
// A token of the gateway's own authorization server is refused here: it is bound to one
// resource (RFC 8707) and only VerifyResource accepts it.
func (v *Verifier) Verify(ctx context.Context, token string) (*Principal, error) {
	return v.VerifyResource(ctx, token, "")
}

// VerifyResource is Verify for a request to resource (an absolute URL such as
// https://gw.example/mcp): it also accepts an access token of the gateway's own
// authorization server (Options.Issued) whose aud names resource, and returns it with
// Principal.Grant set. The caller must still check that grant is not revoked. Such a token
// for another resource, or with resource "", is refused (UNAUTHENTICATED, "token is for
// another resource"). The cache is keyed by the token and the resource together, so a
// token accepted for one resource is never answered from the cache for another.
func (v *Verifier) VerifyResource(ctx context.Context, token, resource string) (*Principal, error) {
	verify := func(context.Context, string) (*Principal, time.Time, error) { return v.verify(token, resource) }
	if v.cache == nil {
		p, _, err := verify(ctx, token)
		return p, err
	}
	return v.cache.Verify(ctx, resource, token, verify)
}

// verify is VerifyResource without the cache; it also returns the token's expiry.
func (v *Verifier) verify(token, resource string) (*Principal, time.Time, error) {
	var c Claims
	if v.issued != nil && v.isIssued(token) {
		if _, err := v.issuedParser.ParseWithClaims(token, &c, func(*jwt.Token) (any, error) { return v.issued.Key, nil }); err != nil {
			return nil, time.Time{}, tokenError(err, &c)
		}
		if resource == "" || !slices.Contains(c.Audience, resource) {
			return nil, time.Time{}, apperr.Wrap(ErrInvalidToken, apperr.Unauthenticated, "token is for another resource").
				WithHint("this token was issued for another resource; sign in again for " + resource)
		}
		if c.Grant == "" {
			return nil, time.Time{}, apperr.Wrap(ErrInvalidToken, apperr.Unauthenticated, "token has no grant")
		}
	} else if !v.plain {
		return nil, time.Time{}, apperr.Wrap(ErrInvalidToken, apperr.Unauthenticated, "invalid token: no key of this gateway signed it").
			WithHint("sign in through the gateway's authorization server (its metadata is at /.well-known/oauth-authorization-server)")
	} else if _, err := v.parser.ParseWithClaims(token, &c, v.keys); err != nil {
		return nil, time.Time{}, tokenError(err, &c)
	} else {
		c.Grant = "" // only the gateway's own tokens name a grant
	}
	if c.Subject == "" {
		return nil, time.Time{}, apperr.Wrap(ErrInvalidToken, apperr.Unauthenticated, "token has no subject")
	}
	switch c.Role {
	case RoleMember, RoleAdmin, RoleSuperuser:
	default:
		return nil, time.Time{}, apperr.Wrap(ErrInvalidToken, apperr.Unauthenticated, "token has no valid role")
	}
	var exp time.Time
	if c.ExpiresAt != nil {
		exp = c.ExpiresAt.Time
	}
	return &Principal{Subject: c.Subject, Role: c.Role, Workspaces: c.Workspaces, Groups: c.Groups, Grant: c.Grant}, exp, nil
}

// tokenError is Verify's error for a token the parser refused with err (c: the claims as
// far as they were read).
func tokenError(err error, c *Claims) *apperr.Error {
	cause := fmt.Errorf("%w: %v", ErrInvalidToken, err)
	if errors.Is(err, jwt.ErrTokenExpired) && c.ExpiresAt != nil {
		return apperr.Wrap(cause, apperr.Unauthenticated, "token expired at %s", c.ExpiresAt.UTC().Format(time.RFC3339)).
			WithHint("get a new token (locally: make token) and send it as Authorization: Bearer <token>")
	}
	what := "it could not be verified"
	switch {
	case errors.Is(err, jwt.ErrTokenMalformed):
		what = "not a JWT (expected three base64url parts separated by dots)"
	case errors.Is(err, jwt.ErrTokenSignatureInvalid), errors.Is(err, jwt.ErrTokenUnverifiable):
		what = "its signature does not verify (signed with another secret or key, or altered)"
	case errors.Is(err, jwt.ErrTokenNotValidYet), errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		what = "not valid yet (check the issuer's clock)"
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		what = "a required claim (exp) is missing"
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		what = "issued by another issuer"
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		what = "issued for another audience"
	}
	return apperr.Wrap(cause, apperr.Unauthenticated, "invalid token: %s", what).
		WithHint("send a token this gateway issued (locally: make token) as Authorization: Bearer <token>")
}

// isIssued reports whether token's header names the authorization server's key id (the
// header is read without trusting it: the signature check that follows decides).
func (v *Verifier) isIssued(token string) bool {
	h, _, ok := strings.Cut(token, ".")
	if !ok {
		return false
	}
	b, err := base64.RawURLEncoding.DecodeString(h)
	if err != nil {
		return false
	}
	var hdr struct {
		Kid string `json:"kid"`
	}
	return json.Unmarshal(b, &hdr) == nil && hdr.Kid == v.issued.KeyID
}

// Mint signs an HS256 token for p (its subject, role, workspaces and groups) valid for ttl
// (the dev `make token` command and tests).
func Mint(secret string, p Principal, ttl time.Duration) (string, error) {
	now := time.Now()
	c := Claims{Role: p.Role, Workspaces: p.Workspaces, Groups: p.Groups, RegisteredClaims: jwt.RegisteredClaims{
		Subject: p.Subject, IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(ttl)),
	}}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString([]byte(secret))
}

type principalKey struct{}

// WithPrincipal returns ctx carrying p.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// FromContext returns the principal carried by ctx, or nil.
func FromContext(ctx context.Context) *Principal {
	p, _ := ctx.Value(principalKey{}).(*Principal)
	return p
}

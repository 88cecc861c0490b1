package grants

import (
	"context"
	"encoding/json"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/derrors"
	"github.com/google/uuid"
)

// MCP access tokens (docs/AUTH.md "MCP access tokens"): a token a signed-in person makes
// for themself, for an MCP client that takes only a header (the URL-only sign-in is the
// first way; this is the second). It is an access token of the gateway's own authorization
// server — RS256 with its key, typ at+jwt (RFC 9068), aud the gateway's MCP resource
// <base>/mcp only, sid its grant — so every rule the edge already applies to that server's
// tokens applies: the REST API (resource <base>/api) refuses it, and revoking its grant
// ends it at the next call (Active). It is shown once, at creation; nothing of it is
// stored (its grant is).

// Bounds of an MCP access token's lifetime: an hour at least (shorter ones are what the
// OAuth sign-in is for: 15-minute tokens refreshed by the client), 90 days at most (a
// header token does not rotate, so it must end; 90 days is the longest that GitHub's
// fine-grained tokens and most vendors offer by default before "no expiry").
const (
	MinTokenLifetime = time.Hour
	MaxTokenLifetime = 90 * 24 * time.Hour
)

// MaxTokensPerPerson bounds a person's unexpired, unrevoked MCP access tokens.
const MaxTokensPerPerson = 50

// MaxTokenNameBytes bounds a token's name.
const MaxTokenNameBytes = 100

// DefaultTokenName is the name of a token created without one.
const DefaultTokenName = "MCP access token"

// TokenInput is what POST /api/mcp-tokens reads.
type TokenInput struct {
	Name            string `json:"name,omitempty" doc:"A label to recognise the token by (e.g. the client and machine it is for), at most 100 bytes of printable text; default \"MCP access token\"."`
	WorkspaceID     string `json:"workspaceId" format:"uuid" doc:"The workspace the token acts in: one the caller is a member of."`
	LifetimeSeconds int64  `json:"lifetimeSeconds" doc:"How long the token lives, in seconds: 3600 (1 hour) to 7776000 (90 days)."`
}

// TokenView is an MCP access token as the REST API lists it: never the token.
type TokenView struct {
	ID          string    `json:"id" doc:"Token id (its grant's id; the token's sid claim)."`
	Name        string    `json:"name"`
	WorkspaceID string    `json:"workspaceId" format:"uuid"`
	Role        string    `json:"role" doc:"The role the token carries: member or admin."`
	Resource    string    `json:"resource" doc:"The only resource (aud) the token is valid for: the gateway's MCP endpoint, <origin>/mcp."`
	CreatedAt   time.Time `json:"createdAt"`
	ExpiresAt   time.Time `json:"expiresAt"`
}

// CreatedToken is the answer to a creation: the view and, this once, the token.
type CreatedToken struct {
	TokenView
	Token string `json:"token" doc:"The bearer token, shown this once: it is not stored and cannot be read again. Send it as Authorization: Bearer <token> to <origin>/mcp/{workspaceId}."`
}

// CreateToken makes an MCP access token for caller p in in.WorkspaceID, signed by s.Key,
// for the MCP resource of issuer base (<base>/mcp; iss base). The token carries p's subject
// and groups and its role in the workspace: for a person who signed in through the identity
// provider (a row of people), the membership's role now (and each call checks it again:
// db.ASGrantActive); for any other principal (development tokens, JWT_JWKS_URL) its
// token's role, a superuser's as admin (an MCP token never carries superuser, as the
// authorization server's MCP tokens do not).
//
// Errors: VALIDATION_ERROR with details.field (lifetimeSeconds out of bounds, a bad name,
// a missing or malformed workspaceId); FORBIDDEN when p is not a member of the workspace;
// CONFLICT at MaxTokensPerPerson; UNAVAILABLE when no signing key is configured.
func (s *Service) CreateToken(ctx context.Context, p *auth.Principal, base string, in TokenInput) (_ *CreatedToken, err error) {
	defer derrors.Wrap(&err, "grants: create MCP token")
	if s.Key == nil {
		return nil, apperr.New(apperr.Unavailable, "this gateway's authorization server is not configured (no signing key)")
	}
	name, err := tokenName(in.Name)
	if err != nil {
		return nil, err
	}
	life := time.Duration(in.LifetimeSeconds) * time.Second
	if in.LifetimeSeconds < int64(MinTokenLifetime/time.Second) || in.LifetimeSeconds > int64(MaxTokenLifetime/time.Second) {
		return nil, apperr.New(apperr.Validation, "lifetimeSeconds must be between 3600 (1 hour) and 7776000 (90 days); got %d", in.LifetimeSeconds).
			WithDetails(map[string]string{"field": "lifetimeSeconds"})
	}
	ws := in.WorkspaceID
	if ws == "" || !db.IsUUID(ws) {
		return nil, apperr.New(apperr.Validation, "workspaceId must be a workspace id (a UUID)").
			WithDetails(map[string]string{"field": "workspaceId"})
	}
	if !p.InWorkspace(ws) {
		return nil, apperr.New(apperr.Forbidden, "you are not a member of workspace %s", ws)
	}
	role, person, err := s.tokenRole(ctx, p, ws)
	if err != nil {
		return nil, err
	}
	n, err := db.MCPTokenCountActive(ctx, s.Pool, p.Subject)
	if err != nil {
		return nil, err
	}
	if n >= MaxTokensPerPerson {
		return nil, apperr.New(apperr.Conflict, "you have %d active MCP access tokens, the most one person may hold", n).
			WithHint("revoke one you no longer use (GET /api/mcp-tokens lists them)")
	}
	now := s.now().UTC().Truncate(time.Second)
	t := &db.MCPToken{ID: uuid.NewString(), Name: name, PersonID: p.Subject, WorkspaceID: ws, Role: role,
		CreatedAt: now, ExpiresAt: now.Add(life), MemberCheck: person}
	claims := map[string]any{
		"iss": base, "sub": p.Subject, "aud": []string{MCPResource(base)},
		"iat": now.Unix(), "nbf": now.Unix(), "exp": t.ExpiresAt.Unix(), "jti": uuid.NewString(),
		"sid": t.ID, "client_id": db.MCPTokenClientID, "scope": "mcp",
		"role": role, "workspaces": []string{ws},
	}
	if len(p.Groups) > 0 {
		claims["groups"] = p.Groups
	}
	b, err := json.Marshal(claims)
	if err != nil {
		return nil, err
	}
	tok, err := s.Key.SignJWT(ctx, "at+jwt", b)
	if err != nil {
		return nil, err
	}
	// The grant is written only once the token exists: a failed signature leaves nothing.
	if err := db.MCPTokenInsert(ctx, s.Pool, t); err != nil {
		return nil, err
	}
	return &CreatedToken{TokenView: tokenView(t, base), Token: tok}, nil
}

// tokenRole is the role an MCP access token of p in ws carries, and whether p is a person
// whose membership each call checks again.
func (s *Service) tokenRole(ctx context.Context, p *auth.Principal, ws string) (string, bool, error) {
	if db.IsUUID(p.Subject) {
		if _, err := db.PersonGet(ctx, s.Pool, p.Subject); err == nil {
			ms, err := db.MembershipsOfPerson(ctx, s.Pool, p.Subject)
			if err != nil {
				return "", false, err
			}
			for _, m := range ms {
				if m.WorkspaceID == ws {
					return m.Role, true, nil
				}
			}
			return "", false, apperr.New(apperr.Forbidden, "you are not a member of workspace %s", ws).
				WithHint("an MCP access token acts in a workspace you are a member of")
		} else if apperr.CodeOf(err) != apperr.NotFound {
			return "", false, err
		}
	}
	switch p.Role {
	case auth.RoleMember:
		return auth.RoleMember, false, nil
	case auth.RoleAdmin, auth.RoleSuperuser:
		return auth.RoleAdmin, false, nil
	}
	return "", false, apperr.New(apperr.Forbidden, "your token has no role")
}

// Tokens returns the caller's MCP access tokens that are neither revoked nor expired,
// newest first (never a token: TokenView). base is the issuer base (each view's resource).
func (s *Service) Tokens(ctx context.Context, p *auth.Principal, base string) (_ []TokenView, err error) {
	defer derrors.Wrap(&err, "grants: list MCP tokens")
	rows, err := db.MCPTokenListByPerson(ctx, s.Pool, p.Subject)
	if err != nil {
		return nil, err
	}
	out := make([]TokenView, 0, len(rows))
	for i := range rows {
		out = append(out, tokenView(&rows[i], base))
	}
	return out, nil
}

// RevokeToken revokes the caller's MCP access token id: its next call to /mcp is refused
// (the gateway's grant check). Errors: NOT_FOUND when id is not an active MCP access token
// of the caller — another person's is not found, not forbidden (an admin revokes a
// member's tokens as connected clients: Revoke).
func (s *Service) RevokeToken(ctx context.Context, p *auth.Principal, id string) (err error) {
	defer derrors.Wrap(&err, "grants: revoke MCP token %s", id)
	notFound := apperr.New(apperr.NotFound, "no such MCP access token")
	return db.InTx(ctx, s.Pool, func(tx db.Tx) error {
		t, err := db.MCPTokenGet(ctx, tx, id)
		if apperr.CodeOf(err) == apperr.NotFound {
			return notFound
		} else if err != nil {
			return err
		}
		if t.PersonID != p.Subject || t.RevokedAt != nil || !t.ExpiresAt.After(s.now()) {
			return notFound
		}
		return db.ASGrantRevoke(ctx, tx, id)
	})
}

// MCPResource is the gateway's MCP resource for issuer base (authserver.Resource): the one
// audience of an MCP access token.
func MCPResource(base string) string { return base + "/mcp" }

func tokenView(t *db.MCPToken, base string) TokenView {
	return TokenView{ID: t.ID, Name: t.Name, WorkspaceID: t.WorkspaceID, Role: t.Role, Resource: MCPResource(base),
		CreatedAt: t.CreatedAt, ExpiresAt: t.ExpiresAt}
}

// tokenName is name trimmed (DefaultTokenName when empty). Errors: VALIDATION_ERROR
// (details.field "name") over MaxTokenNameBytes, not UTF-8, or with a control character.
func tokenName(name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return DefaultTokenName, nil
	}
	bad := func(msg string) error {
		return apperr.New(apperr.Validation, "name %s", msg).WithDetails(map[string]string{"field": "name"})
	}
	if len(name) > MaxTokenNameBytes {
		return "", bad("is longer than 100 bytes")
	}
	if !utf8.ValidString(name) || strings.IndexFunc(name, unicode.IsControl) >= 0 {
		return "", bad("must be printable text (no control characters)")
	}
	return name, nil
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

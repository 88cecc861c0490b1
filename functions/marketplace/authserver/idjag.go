package authserver

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/db"
	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/go-jose/go-jose/v4"
	josejwt "github.com/go-jose/go-jose/v4/jwt"
	"github.com/ory/fosite"
	"github.com/ory/fosite/handler/oauth2"
)

// Enterprise-Managed Authorization (the MCP extension io.modelcontextprotocol/
// enterprise-managed-authorization, SEP-990) at the token endpoint: an organisation's
// identity provider issues an Identity Assertion JWT Authorization Grant (ID-JAG,
// draft-ietf-oauth-identity-assertion-authz-grant-04) for a person, a client and this
// gateway, and the client presents it here with the JWT bearer grant (RFC 7523 §2.1). No
// consent page: the identity provider's policy decided. docs/AUTH.md "The enterprise path".

// Names of the grant (RFC 7523 §2.1; draft-ietf-oauth-identity-assertion-authz-grant-04
// §3, §7.2).
const (
	GrantTypeJWTBearer = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	// IDJAGType is the ID-JAG's JOSE typ header (draft §3.1, §9.x media type registration).
	IDJAGType = "oauth-id-jag+jwt"
	// IDJAGGrantProfile is the value this server lists in authorization_grant_profiles_supported
	// (draft §7.2; the extension's §6 "Discovery").
	IDJAGGrantProfile = "urn:ietf:params:oauth:grant-profile:id-jag"
)

// Bounds of an ID-JAG's time claims. The extension's §7.4.2 asks for short-lived
// assertions and minimal clock skew; Okta issues them for 300 s.
const (
	idjagSkew        = time.Minute
	idjagMaxLifetime = 10 * time.Minute
	idjagMaxBytes    = 16 << 10
)

// idjagAlgs is the allow-list of signature algorithms (the extension's §7.4.1: explicit,
// never "none", no symmetric keys).
var idjagAlgs = []jose.SignatureAlgorithm{jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384,
	jose.PS512, jose.ES256, jose.ES384, jose.ES512, jose.EdDSA}

// idjagClaims are the ID-JAG claims this server reads (draft §3.1).
type idjagClaims struct {
	josejwt.Claims
	ClientID string          `json:"client_id"`
	Resource json.RawMessage `json:"resource"`
	Scope    string          `json:"scope"`
	Email    string          `json:"email"`
}

// idjag is the JWT bearer grant's fosite token endpoint handler. HandleTokenEndpointRequest
// checks the assertion and fills the session (person, workspace, grant id) the way the
// consent page does for a code; the token endpoint (token) then reads the membership and
// groups as for every grant; PopulateTokenEndpointResponse issues the access token and
// consumes the jti in one transaction.
type idjag struct {
	s      *Server
	helper *oauth2.HandleHelper
	store  *store

	mu   sync.Mutex
	keys map[string]*oidc.RemoteKeySet // by JWKS URL
}

// idjagRequest is what HandleTokenEndpointRequest learnt, for PopulateTokenEndpointResponse.
type idjagRequest struct {
	issuer, jti string
	exp         time.Time
}

func newIDJAG(cfg *fosite.Config, st *store, strategy oauth2.AccessTokenStrategy) *idjag {
	return &idjag{store: st, keys: map[string]*oidc.RemoteKeySet{},
		helper: &oauth2.HandleHelper{AccessTokenStrategy: strategy, AccessTokenStorage: st, Config: cfg}}
}

// factory is the compose.Factory of the handler.
func (h *idjag) factory(fosite.Configurator, any, any) any { return h }

// CanSkipClientAuth implements fosite.TokenEndpointHandler: the client authenticates as
// for any grant (the extension's §5).
func (*idjag) CanSkipClientAuth(context.Context, fosite.AccessRequester) bool { return false }

// CanHandleTokenEndpointRequest implements fosite.TokenEndpointHandler.
func (*idjag) CanHandleTokenEndpointRequest(_ context.Context, r fosite.AccessRequester) bool {
	return r.GetGrantTypes().ExactOne(GrantTypeJWTBearer)
}

// refuse is the one error of every refused assertion: invalid_grant (RFC 7521 §4.1.1,
// RFC 7523 §3.1, the extension's §7.6.2) with a description saying why.
func refuse(format string, args ...any) error {
	return fosite.ErrInvalidGrant.WithHintf(format, args...)
}

// HandleTokenEndpointRequest implements fosite.TokenEndpointHandler: the checks of
// draft-ietf-oauth-identity-assertion-authz-grant-04 §4.4.1 and the extension's §7, in
// order: one assertion no larger than idjagMaxBytes; typ; an allowed algorithm; iss an
// enabled trusted identity provider; its signature by that provider's JWKS; aud this
// server's issuer; resource (if any) one of this gateway's MCP resources (the same rule as
// the resource parameter, Server.resource); client_id the authenticated client and one
// the provider may name; exp, iat (and nbf) within bounds; jti present and not used
// before; the scope claim, when present, including mcp (a requested scope not offered was
// dropped before, as for every grant: RFC 6749 §3.3); the person by (iss, sub), or by verified email where the
// provider links by email; a membership in the workspace. Every refusal is invalid_grant
// and writes nothing.
func (h *idjag) HandleTokenEndpointRequest(ctx context.Context, ar fosite.AccessRequester) error {
	r, _ := ctx.Value(fosite.RequestContextKey).(*http.Request)
	if r == nil {
		return fosite.ErrServerError.WithDebug("no request in the context")
	}
	s := h.s
	form := ar.GetRequestForm()
	if len(form["assertion"]) != 1 || form.Get("assertion") == "" {
		return fosite.ErrInvalidRequest.WithHint("The jwt-bearer grant takes exactly one assertion (RFC 7523 §2.1).")
	}
	raw := form.Get("assertion")
	if len(raw) > idjagMaxBytes {
		return refuse("The assertion is larger than %d bytes.", idjagMaxBytes)
	}
	c, ok := ar.GetClient().(*client)
	if !ok || c.firstParty {
		return fosite.ErrUnauthorizedClient.WithHint("The console does not take identity assertions.")
	}
	tok, err := josejwt.ParseSigned(raw, idjagAlgs)
	if err != nil {
		return refuse("The assertion is not a signed JWT with an allowed algorithm (%s).", algNames())
	}
	if len(tok.Headers) != 1 {
		return refuse("The assertion must carry exactly one signature.")
	}
	if typ, _ := tok.Headers[0].ExtraHeaders[jose.HeaderType].(string); !isIDJAGType(typ) {
		if typ == "" {
			return refuse("The assertion has no typ header; an ID-JAG's is %q.", IDJAGType)
		}
		return refuse("The assertion's typ is %q, not %q: it is not an ID-JAG.", typ, IDJAGType)
	}
	var unverified josejwt.Claims
	if err := tok.UnsafeClaimsWithoutVerification(&unverified); err != nil || unverified.Issuer == "" {
		return refuse("The assertion has no iss claim.")
	}
	idp, err := db.TrustedIDPGet(ctx, s.o.Pool, unverified.Issuer)
	if apperr.CodeOf(err) == apperr.NotFound {
		return refuse("The issuer %q is not an identity provider this gateway trusts.", truncate(unverified.Issuer, 200))
	} else if err != nil {
		return fosite.ErrServerError.WithWrap(err)
	}
	if !idp.Enabled {
		return refuse("The identity provider %q is disabled on this gateway.", idp.Issuer)
	}
	payload, err := h.keySet(idp.JWKSURL).VerifySignature(ctx, raw)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return refuse("The assertion's signature is not by a key of %q (its JWKS at %s).", idp.Issuer, idp.JWKSURL)
	}
	var cl idjagClaims
	if err := json.Unmarshal(payload, &cl); err != nil {
		return refuse("The assertion's claims are not a JSON object of the ID-JAG's claims.")
	}
	if cl.Issuer != idp.Issuer {
		return refuse("The assertion's iss changed under its signature.")
	}
	base := s.base(r)
	if !cl.Audience.Contains(base) && !cl.Audience.Contains(base+"/") {
		return refuse("The assertion's aud is not this authorization server (%s).", base)
	}
	if cl.Subject == "" {
		return refuse("The assertion has no sub claim.")
	}
	now := s.now()
	switch {
	case cl.Expiry == nil:
		return refuse("The assertion has no exp claim.")
	case cl.IssuedAt == nil:
		return refuse("The assertion has no iat claim.")
	case now.After(cl.Expiry.Time().Add(idjagSkew)):
		return refuse("The assertion expired at %s.", cl.Expiry.Time().UTC().Format(time.RFC3339))
	case cl.IssuedAt.Time().After(now.Add(idjagSkew)):
		return refuse("The assertion's iat (%s) is in the future.", cl.IssuedAt.Time().UTC().Format(time.RFC3339))
	case cl.Expiry.Time().Sub(cl.IssuedAt.Time()) > idjagMaxLifetime:
		return refuse("The assertion lives longer than %s (iat to exp): ID-JAGs are short-lived.", idjagMaxLifetime)
	case cl.NotBefore != nil && cl.NotBefore.Time().After(now.Add(idjagSkew)):
		return refuse("The assertion is not valid before %s.", cl.NotBefore.Time().UTC().Format(time.RFC3339))
	}
	if cl.ID == "" || len(cl.ID) > 255 {
		return refuse("The assertion has no jti claim (or one longer than 255 characters): ID-JAGs are single-use.")
	}
	if cl.ClientID != c.GetID() {
		return refuse("The assertion is for client %q, not for the client that presents it.", truncate(cl.ClientID, 200))
	}
	if len(idp.AllowedClientIDs) > 0 && !slices.Contains(idp.AllowedClientIDs, c.GetID()) {
		return refuse("The identity provider %q may not grant access to this client here.", idp.Issuer)
	}
	hint, aud, err := s.idjagResource(r, cl.Resource)
	if err != nil {
		return err
	}
	if cl.Scope != "" && !slices.Contains(strings.Fields(cl.Scope), Scope) {
		return refuse("The assertion grants no scope of this server (%s).", Scope)
	}
	if used, err := db.IDJAGUsed(ctx, s.o.Pool, idp.Issuer, cl.ID); err != nil {
		return fosite.ErrServerError.WithWrap(err)
	} else if used {
		return refuse("The assertion was used before: an ID-JAG is single-use (jti).")
	}
	person, err := h.person(ctx, idp, &cl)
	if err != nil {
		return err
	}
	ms, err := s.o.Members.Memberships(ctx, person.ID)
	if err != nil {
		return fosite.ErrServerError.WithWrap(err)
	}
	ws, role, err := idjagWorkspace(ms, hint)
	if err != nil {
		return err
	}
	id, err := db.ASGrantFindEnterprise(ctx, s.o.Pool, c.GetID(), person.ID, ws, idp.Issuer)
	if err != nil && apperr.CodeOf(err) != apperr.NotFound {
		return fosite.ErrServerError.WithWrap(err)
	}
	if id != "" {
		ar.SetID(id) // the same connected client as the last ID-JAG's (db.ASGrantFindEnterprise)
	}
	sess, ok := ar.GetSession().(*oauth2.JWTSession)
	if !ok {
		return fosite.ErrServerError.WithDebug("unexpected session type")
	}
	sess.JWTClaims.Subject = person.ID
	sess.JWTClaims.Extra = map[string]any{"role": role, "workspaces": []string{ws}, "sid": ar.GetID(),
		"client_id": c.GetID()}
	sess.Subject = person.ID
	sess.SetExpiresAt(fosite.AccessToken, now.UTC().Add(s.o.AccessTokenLifespan).Round(time.Second))
	ar.GrantScope(Scope)
	for _, a := range aud {
		ar.GrantAudience(a)
	}
	if f, ok := ar.(*fosite.AccessRequest); ok {
		f.Form.Set("resource", aud[0]) // stored with the token (store.put); the assertion is not
	}
	return nil
}

// PopulateTokenEndpointResponse implements fosite.TokenEndpointHandler: in one
// transaction, the jti is recorded (a concurrent replay loses on the primary key), the
// access token issued exactly as for a code (the same strategy, lifetime and storage,
// which creates or touches the grant), the grant marked as the identity provider's, and
// the grant recorded in the event log (issuer, jti, client; never the assertion). No
// refresh token: draft-ietf-oauth-identity-assertion-authz-grant-04 §4.4.3 ("SHOULD NOT"),
// the client presents a new ID-JAG instead, and every new ID-JAG reads the membership.
func (h *idjag) PopulateTokenEndpointResponse(ctx context.Context, ar fosite.AccessRequester, resp fosite.AccessResponder) (err error) {
	if !h.CanHandleTokenEndpointRequest(ctx, ar) {
		return fosite.ErrUnknownRequest
	}
	// The assertion HandleTokenEndpointRequest verified, on the same request: its iss, jti
	// and exp again, without a side channel between the two calls.
	req, err := checkedIDJAG(ar)
	if err != nil {
		return fosite.ErrServerError.WithWrap(err)
	}
	ctx, err = h.store.BeginTX(ctx)
	if err != nil {
		return fosite.ErrServerError.WithWrap(err)
	}
	defer func() {
		if err != nil {
			_ = h.store.Rollback(ctx)
		}
	}()
	q := h.store.q(ctx)
	if err := db.IDJAGUse(ctx, q, req.issuer, req.jti, req.exp); apperr.CodeOf(err) == apperr.Conflict {
		return refuse("The assertion was used before: an ID-JAG is single-use (jti).")
	} else if err != nil {
		return fosite.ErrServerError.WithWrap(err)
	}
	if _, err := h.helper.IssueAccessToken(ctx, h.s.o.AccessTokenLifespan, ar, resp); err != nil {
		return err
	}
	if err := db.ASGrantMarkEnterprise(ctx, q, ar.GetID(), req.issuer); err != nil {
		return fosite.ErrServerError.WithWrap(err)
	}
	sess := ar.GetSession().(*oauth2.JWTSession)
	ws := workspaceOf(sess)
	if err := db.EventInsert(ctx, q, &db.Event{EntityType: db.EventEntityOAuthGrant, EntityID: ar.GetID(),
		Action: "oauth.enterprise_grant", Actor: sess.JWTClaims.Subject, WorkspaceID: &ws,
		Payload: map[string]any{"grantType": GrantTypeJWTBearer, "issuer": req.issuer, "jti": req.jti,
			"clientId": ar.GetClient().GetID()}}); err != nil {
		return fosite.ErrServerError.WithWrap(err)
	}
	if err := h.store.Commit(ctx); err != nil {
		return fosite.ErrServerError.WithWrap(err)
	}
	return nil
}

// keySet is the remote key set of a JWKS URL (go-oidc: cached, fetched again when a kid is
// unknown, so a rotation at the identity provider needs nothing here), fetched through
// the URL guard.
func (h *idjag) keySet(jwksURL string) *oidc.RemoteKeySet {
	h.mu.Lock()
	defer h.mu.Unlock()
	if ks, ok := h.keys[jwksURL]; ok {
		return ks
	}
	if len(h.keys) >= 100 {
		clear(h.keys)
	}
	ks := oidc.NewRemoteKeySet(oidc.ClientContext(context.Background(), h.s.clients.http), jwksURL)
	h.keys[jwksURL] = ks
	return ks
}

// isIDJAGType reports whether typ is the ID-JAG's media type (RFC 7515 §4.1.9: compared
// case-insensitively, the "application/" prefix optional).
func isIDJAGType(typ string) bool {
	t := strings.ToLower(typ)
	return t == IDJAGType || t == "application/"+IDJAGType
}

func algNames() string {
	var b strings.Builder
	for i, a := range idjagAlgs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(string(a))
	}
	return b.String()
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// checkedIDJAG reads iss, jti and exp of the assertion of ar, which
// HandleTokenEndpointRequest verified.
func checkedIDJAG(ar fosite.AccessRequester) (*idjagRequest, error) {
	tok, err := josejwt.ParseSigned(ar.GetRequestForm().Get("assertion"), idjagAlgs)
	if err != nil {
		return nil, err
	}
	var cl josejwt.Claims
	if err := tok.UnsafeClaimsWithoutVerification(&cl); err != nil {
		return nil, err
	}
	if cl.Issuer == "" || cl.ID == "" || cl.Expiry == nil {
		return nil, errors.New("authserver: the assertion was not checked")
	}
	return &idjagRequest{issuer: cl.Issuer, jti: cl.ID, exp: cl.Expiry.Time()}, nil
}

var _ fosite.TokenEndpointHandler = (*idjag)(nil)

package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/golang-jwt/jwt/v5"
)

const (
	testIssuer   = "https://issuer.test/"
	testAudience = "agentpack-gateway"
)

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// jwksServer serves a JWKS with rsaKey (kid "rsa-1") and ecKey (kid "ec-1") on loopback.
func jwksServer(t *testing.T, rsaKey *rsa.PrivateKey, ecKey *ecdsa.PrivateKey) string {
	t.Helper()
	ecPub, err := ecKey.PublicKey.Bytes() // 0x04 || X || Y
	if err != nil {
		t.Fatal(err)
	}
	doc := map[string]any{"keys": []map[string]any{
		{"kty": "RSA", "kid": "rsa-1", "use": "sig", "alg": "RS256",
			"n": b64(rsaKey.N.Bytes()), "e": b64(big.NewInt(int64(rsaKey.E)).Bytes())},
		{"kty": "EC", "kid": "ec-1", "use": "sig", "alg": "ES256", "crv": "P-256",
			"x": b64(ecPub[1:33]), "y": b64(ecPub[33:])},
	}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(doc)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/.well-known/jwks.json"
}

func claims(mut func(*Claims)) Claims {
	now := time.Now()
	c := Claims{Role: RoleAdmin, Workspaces: []string{"ws-1"}, RegisteredClaims: jwt.RegisteredClaims{
		Subject: "alice", Issuer: testIssuer, Audience: jwt.ClaimStrings{testAudience},
		IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(time.Hour)),
	}}
	if mut != nil {
		mut(&c)
	}
	return c
}

func sign(t *testing.T, m jwt.SigningMethod, kid string, key any, c Claims) string {
	t.Helper()
	tok := jwt.NewWithClaims(m, c)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestVerifyJWKS(t *testing.T) {
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	otherRSA, _ := rsa.GenerateKey(rand.Reader, 2048)
	ecKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	v, err := NewVerifier(ctx, Options{JWKSURL: jwksServer(t, rsaKey, ecKey), Issuer: testIssuer, Audience: testAudience})
	if err != nil {
		t.Fatal(err)
	}
	none, err := jwt.NewWithClaims(jwt.SigningMethodNone, claims(nil)).SignedString(jwt.UnsafeAllowNoneSignatureType)
	if err != nil {
		t.Fatal(err)
	}
	noneWithKid := func() string {
		tok := jwt.NewWithClaims(jwt.SigningMethodNone, claims(nil))
		tok.Header["kid"] = "rsa-1"
		s, _ := tok.SignedString(jwt.UnsafeAllowNoneSignatureType)
		return s
	}()
	tests := []struct {
		name  string
		token string
		ok    bool
	}{
		{"valid RS256", sign(t, jwt.SigningMethodRS256, "rsa-1", rsaKey, claims(nil)), true},
		{"valid ES256", sign(t, jwt.SigningMethodES256, "ec-1", ecKey, claims(nil)), true},
		{"wrong issuer", sign(t, jwt.SigningMethodRS256, "rsa-1", rsaKey, claims(func(c *Claims) { c.Issuer = "https://evil.test/" })), false},
		{"wrong audience", sign(t, jwt.SigningMethodRS256, "rsa-1", rsaKey, claims(func(c *Claims) { c.Audience = jwt.ClaimStrings{"someone-else"} })), false},
		{"expired", sign(t, jwt.SigningMethodRS256, "rsa-1", rsaKey, claims(func(c *Claims) {
			c.ExpiresAt = jwt.NewNumericDate(time.Now().Add(-time.Minute))
		})), false},
		{"no exp", sign(t, jwt.SigningMethodRS256, "rsa-1", rsaKey, claims(func(c *Claims) { c.ExpiresAt = nil })), false},
		{"wrong key, known kid", sign(t, jwt.SigningMethodRS256, "rsa-1", otherRSA, claims(nil)), false},
		{"unknown kid", sign(t, jwt.SigningMethodRS256, "rsa-2", otherRSA, claims(nil)), false},
		{"alg none", none, false},
		{"alg none with kid", noneWithKid, false},
		{"HS256 when only JWKS is configured", sign(t, jwt.SigningMethodHS256, "rsa-1", []byte("guess"), claims(nil)), false},
		{"RS256 key used as ES256 kid", sign(t, jwt.SigningMethodRS256, "ec-1", rsaKey, claims(nil)), false},
		{"no role", sign(t, jwt.SigningMethodRS256, "rsa-1", rsaKey, claims(func(c *Claims) { c.Role = "" })), false},
		{"no subject", sign(t, jwt.SigningMethodRS256, "rsa-1", rsaKey, claims(func(c *Claims) { c.Subject = "" })), false},
		{"garbage", "not.a.jwt", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := v.Verify(t.Context(), tt.token)
			if tt.ok {
				if err != nil {
					t.Fatalf("Verify: %v", err)
				}
				if p.Subject != "alice" || p.Role != RoleAdmin || !p.InWorkspace("ws-1") || p.InWorkspace("ws-2") {
					t.Errorf("principal = %+v", p)
				}
				return
			}
			if err == nil {
				t.Fatalf("Verify accepted the token: %+v", p)
			}
			if !errors.Is(err, ErrInvalidToken) || apperr.CodeOf(err) != apperr.Unauthenticated {
				t.Errorf("err = %v, want UNAUTHENTICATED wrapping ErrInvalidToken", err)
			}
		})
	}
}

func TestVerifyHS256(t *testing.T) {
	v, err := NewVerifier(context.Background(), Options{Secret: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	good, _ := Mint("s3cret", Principal{Subject: "bob", Role: RoleMember, Workspaces: []string{"w"}}, time.Hour)
	if p, err := v.Verify(t.Context(), good); err != nil || p.Subject != "bob" || p.IsAdmin() {
		t.Fatalf("Verify(minted) = %+v, %v", p, err)
	}
	bad, _ := Mint("other", Principal{Subject: "bob", Role: RoleMember}, time.Hour)
	if _, err := v.Verify(t.Context(), bad); err == nil {
		t.Error("a token signed with another secret was accepted")
	}
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	if _, err := v.Verify(t.Context(), sign(t, jwt.SigningMethodRS256, "rsa-1", rsaKey, claims(nil))); err == nil {
		t.Error("an RS256 token was accepted without a JWKS")
	}
	if _, err := NewVerifier(context.Background(), Options{}); err == nil {
		t.Error("NewVerifier without a secret or JWKS succeeded")
	}
}

func TestPrincipal(t *testing.T) {
	tests := []struct {
		name               string
		p                  Principal
		admin, super, inWS bool
	}{
		{"member", Principal{Role: RoleMember, Workspaces: []string{"a"}}, false, false, true},
		{"admin", Principal{Role: RoleAdmin, Workspaces: []string{"a"}}, true, false, true},
		{"admin elsewhere", Principal{Role: RoleAdmin, Workspaces: []string{"b"}}, true, false, false},
		{"superuser", Principal{Role: RoleSuperuser}, true, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.p.IsAdmin() != tt.admin || tt.p.IsSuperuser() != tt.super || tt.p.InWorkspace("a") != tt.inWS {
				t.Errorf("%+v: admin=%v super=%v in(a)=%v", tt.p, tt.p.IsAdmin(), tt.p.IsSuperuser(), tt.p.InWorkspace("a"))
			}
			err := RequireAdmin(&tt.p)
			if tt.admin != (err == nil) {
				t.Fatalf("RequireAdmin(%s) = %v", tt.p.Role, err)
			}
			if err != nil && (apperr.CodeOf(err) != apperr.Forbidden || err.Error() != "FORBIDDEN: this action requires the admin role") {
				t.Errorf("RequireAdmin(%s) = %q (%s), want FORBIDDEN", tt.p.Role, err, apperr.CodeOf(err))
			}
		})
	}
	ctx := WithPrincipal(context.Background(), &Principal{Subject: "x"})
	if FromContext(ctx).Subject != "x" || FromContext(context.Background()) != nil {
		t.Error("WithPrincipal/FromContext")
	}
}

// TestTokenCache: a verified token is answered from the cache (keyed by its hash) until it
// expires, then verified again; a failure is never cached; the cache never holds more
// than its size; a different token is a different entry.
func TestTokenCache(t *testing.T) {
	t.Parallel()
	c := NewTokenCache(2)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c.now = func() time.Time { return now }
	calls := 0
	verify := func(exp time.Time, fail bool) func(context.Context, string) (*Principal, time.Time, error) {
		return func(_ context.Context, tok string) (*Principal, time.Time, error) {
			calls++
			if fail {
				return nil, time.Time{}, errors.New("bad token")
			}
			return &Principal{Subject: "s-" + tok, Role: RoleMember}, exp, nil
		}
	}
	ctx := context.Background()
	exp := now.Add(time.Minute)
	for range 3 {
		p, err := c.Verify(ctx, "", "a", verify(exp, false))
		if err != nil || p.Subject != "s-a" {
			t.Fatalf("%+v %v", p, err)
		}
	}
	if calls != 1 {
		t.Fatalf("verified %d times, want once (cached)", calls)
	}
	p, _ := c.Verify(ctx, "", "a", verify(exp, false))
	p.Subject = "changed" // the caller's copy
	if p, _ := c.Verify(ctx, "", "a", verify(exp, false)); p.Subject != "s-a" {
		t.Fatalf("a caller's change reached the cache: %+v", p)
	}
	now = exp // expired: verified again
	if _, err := c.Verify(ctx, "", "a", verify(exp, true)); err == nil || calls != 2 {
		t.Fatalf("an expired entry answered: %v, %d calls", err, calls)
	}
	if _, err := c.Verify(ctx, "", "a", verify(exp, true)); err == nil || calls != 3 {
		t.Fatalf("a failure was cached: %v, %d calls", err, calls)
	}
	// Keyed by token and resource together: the same token for another resource is
	// verified again, then both are cached.
	now = now.Add(-time.Second)
	if _, err := c.Verify(ctx, "https://gw/mcp", "a", verify(exp, false)); err != nil || calls != 4 {
		t.Fatalf("another resource answered from the cache: %v, %d calls", err, calls)
	}
	if _, err := c.Verify(ctx, "https://gw/mcp", "a", verify(exp, false)); err != nil || calls != 4 {
		t.Fatalf("the second resource was not cached: %v, %d calls", err, calls)
	}
	later := now.Add(time.Hour)
	for _, tok := range []string{"b", "c", "d", "e"} {
		if _, err := c.Verify(ctx, "", tok, verify(later, false)); err != nil {
			t.Fatal(err)
		}
	}
	if n := c.Len(); n > 2 {
		t.Fatalf("%d entries, bound 2", n)
	}
}

// TestVerifierCachesByExpiry: the Verifier's own cache answers a token verified before and
// keeps refusing a bad one.
func TestVerifierCachesByExpiry(t *testing.T) {
	t.Parallel()
	v, err := NewVerifier(context.Background(), Options{Secret: "s"})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := Mint("s", Principal{Subject: "u", Role: RoleAdmin, Workspaces: []string{"w"}}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if p, err := v.Verify(context.Background(), tok); err != nil || p.Subject != "u" || p.Role != RoleAdmin {
			t.Fatalf("%+v %v", p, err)
		}
	}
	if v.cache.Len() != 1 {
		t.Fatalf("%d cached, want 1", v.cache.Len())
	}
	if _, err := v.Verify(context.Background(), tok+"x"); apperr.CodeOf(err) != apperr.Unauthenticated {
		t.Fatalf("tampered token: %v", err)
	}
}

// The "groups" claim becomes Principal.Groups: a list, one string, or none; any other
// shape refuses the token.
func TestVerifyGroupsClaim(t *testing.T) {
	v, err := NewVerifier(context.Background(), Options{Secret: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := Mint("s3cret", Principal{Subject: "ada", Role: RoleMember, Workspaces: []string{"w"}, Groups: []string{"eng", "design"}}, time.Hour)
	if p, err := v.Verify(t.Context(), tok); err != nil || len(p.Groups) != 2 || p.Groups[0] != "eng" || p.Groups[1] != "design" {
		t.Fatalf("Verify(list) = %+v, %v", p, err)
	}
	hs := func(groups any) string {
		c := jwt.MapClaims{"sub": "ada", "role": RoleMember, "workspaces": []string{"w"}, "exp": time.Now().Add(time.Hour).Unix()}
		if groups != nil {
			c["groups"] = groups
		}
		s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString([]byte("s3cret"))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, c := range []struct {
		name   string
		groups any
		want   []string
	}{{"absent", nil, nil}, {"one string", "eng", []string{"eng"}}, {"empty string", "", nil}, {"empty list", []string{}, nil}} {
		p, err := v.Verify(t.Context(), hs(c.groups))
		if err != nil || len(p.Groups) != len(c.want) || len(c.want) == 1 && p.Groups[0] != c.want[0] {
			t.Errorf("%s: Verify = %+v, %v, want groups %v", c.name, p, err, c.want)
		}
	}
	for _, bad := range []any{42, map[string]any{"a": 1}, []any{"eng", 7}} {
		if p, err := v.Verify(t.Context(), hs(bad)); err == nil || !errors.Is(err, ErrInvalidToken) {
			t.Errorf("groups %v: Verify = %+v, %v, want the token refused", bad, p, err)
		}
	}
}

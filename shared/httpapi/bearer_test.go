package httpapi_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/httpapi"
	"github.com/golang-jwt/jwt/v5"
)

// grantsStub answers Active from a map, or fails.
type grantsStub struct {
	active map[string]bool
	err    error
}

func (g grantsStub) Active(_ context.Context, id string) (bool, error) { return g.active[id], g.err }

// TestBearer: the REST APIs' authentication takes the authorization server's tokens for
// <base>/api whose grant stands, and refuses one for another resource, one whose grant is
// revoked, and every one when Grants is nil; a failed grant read is a 500, not a pass.
func TestBearer(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	v, err := auth.NewVerifier(t.Context(), auth.Options{Secret: "s3cret-s3cret-s3cret-s3cret-s3cret",
		Issued: &auth.IssuedKey{KeyID: "k1", Key: &key.PublicKey}})
	if err != nil {
		t.Fatal(err)
	}
	issued := func(aud, grant string) string {
		tok := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{"sub": "p1", "role": "member",
			"workspaces": []string{"w"}, "sid": grant, "aud": []string{aud}, "exp": time.Now().Add(time.Minute).Unix()})
		tok.Header["kid"] = "k1"
		s, err := tok.SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	hs, err := auth.Mint("s3cret-s3cret-s3cret-s3cret-s3cret", auth.Principal{Subject: "dev", Role: "admin", Workspaces: []string{"w"}}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(auth.FromContext(r.Context()).Subject))
	})
	const base = "http://gw.test"
	stub := grantsStub{active: map[string]bool{"g1": true}}
	for _, c := range []struct {
		name   string
		bearer httpapi.Bearer
		token  string
		status int
		body   string
	}{
		{"console token", httpapi.Bearer{Grants: stub}, issued(base+"/api", "g1"), 200, "p1"},
		{"PUBLIC_BASE_URL", httpapi.Bearer{PublicBaseURL: "https://api.example", Grants: stub}, issued("https://api.example/api", "g1"), 200, "p1"},
		{"HS256 beside it", httpapi.Bearer{Grants: stub}, hs, 200, "dev"},
		{"/mcp token", httpapi.Bearer{Grants: stub}, issued(base+"/mcp", "g1"), 401, "another resource"},
		{"another origin's /api", httpapi.Bearer{Grants: stub}, issued("http://other.test/api", "g1"), 401, "another resource"},
		{"revoked grant", httpapi.Bearer{Grants: stub}, issued(base+"/api", "g2"), 401, "revoked"},
		{"grant read fails", httpapi.Bearer{Grants: grantsStub{err: errors.New("db down")}}, issued(base+"/api", "g1"), 500, "INTERNAL"},
		{"no Grants: refused", httpapi.Bearer{}, issued(base+"/api", "g1"), 401, "another resource"},
		{"no token", httpapi.Bearer{Grants: stub}, "", 401, "missing bearer token"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := c.bearer
			b.Verifier = v
			req := httptest.NewRequest("GET", base+"/api/x", nil)
			if c.token != "" {
				req.Header.Set("Authorization", "Bearer "+c.token)
			}
			rec := httptest.NewRecorder()
			b.Authenticate(slog.New(slog.DiscardHandler), ok).ServeHTTP(rec, req)
			if rec.Code != c.status || !strings.Contains(rec.Body.String(), c.body) {
				t.Fatalf("%d %s, want %d with %q", rec.Code, rec.Body, c.status, c.body)
			}
		})
	}
}

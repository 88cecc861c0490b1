package idp

import (
	"testing"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/dbtest"
)

var super = &auth.Principal{Subject: "root", Role: auth.RoleSuperuser}

// TRUSTED_IDPS adds the providers not listed yet and leaves a listed one as a superuser set
// it: a cold start does not re-enable a provider a superuser disabled.
func TestSeed(t *testing.T) {
	t.Parallel()
	pool, _ := dbtest.Fresh(t)
	s := &Service{Pool: pool}
	ctx := t.Context()
	off := false
	if _, err := s.Put(ctx, super, Input{Issuer: "https://a.example", JWKSURL: "https://a.example/keys", Enabled: &off}); err != nil {
		t.Fatal(err)
	}
	js := `[{"issuer":"https://a.example","jwksUrl":"https://a.example/other"},
		{"issuer":"https://b.example","jwksUrl":"https://b.example/keys","allowedClientIds":["c1"],"linkByEmail":true}]`
	if err := s.Seed(ctx, js); err != nil {
		t.Fatal(err)
	}
	a, err := db.TrustedIDPGet(ctx, pool, "https://a.example")
	if err != nil || a.Enabled || a.JWKSURL != "https://a.example/keys" {
		t.Fatalf("a after seed: %+v %v, want it as the superuser left it", a, err)
	}
	b, err := db.TrustedIDPGet(ctx, pool, "https://b.example")
	if err != nil || !b.Enabled || !b.LinkByEmail || len(b.AllowedClientIDs) != 1 {
		t.Fatalf("b after seed: %+v %v", b, err)
	}
	if err := s.Seed(ctx, ""); err != nil {
		t.Fatalf("empty TRUSTED_IDPS: %v", err)
	}
}

// A bad TRUSTED_IDPS is VALIDATION_ERROR naming the entry, and seeds nothing.
func TestSeedRefused(t *testing.T) {
	t.Parallel()
	pool, _ := dbtest.Fresh(t)
	s := &Service{Pool: pool}
	for name, js := range map[string]string{
		"not JSON":      `{`,
		"not an array":  `{"issuer":"https://a.example"}`,
		"http issuer":   `[{"issuer":"https://ok.example","jwksUrl":"https://ok.example/k"},{"issuer":"http://a.example","jwksUrl":"https://a.example/k"}]`,
		"missing jwks":  `[{"issuer":"https://a.example"}]`,
		"empty client":  `[{"issuer":"https://a.example","jwksUrl":"https://a.example/k","allowedClientIds":[""]}]`,
		"user info url": `[{"issuer":"https://u:p@a.example","jwksUrl":"https://a.example/k"}]`,
	} {
		err := s.Seed(t.Context(), js)
		if apperr.CodeOf(err) != apperr.Validation {
			t.Errorf("%s: %v, want VALIDATION_ERROR", name, err)
		}
	}
	if ps, _ := db.TrustedIDPList(t.Context(), pool); len(ps) != 0 {
		t.Fatalf("a refused seed wrote %d providers", len(ps))
	}
}

// Only a superuser lists or changes the providers.
func TestSuperuserOnly(t *testing.T) {
	t.Parallel()
	pool, _ := dbtest.Fresh(t)
	s := &Service{Pool: pool}
	admin := &auth.Principal{Subject: "a", Role: auth.RoleAdmin, Workspaces: []string{"w"}}
	if _, err := s.List(t.Context(), admin); apperr.CodeOf(err) != apperr.Forbidden {
		t.Errorf("List as admin: %v", err)
	}
	if _, err := s.Put(t.Context(), admin, Input{Issuer: "https://a.example", JWKSURL: "https://a.example/k"}); apperr.CodeOf(err) != apperr.Forbidden {
		t.Errorf("Put as admin: %v", err)
	}
	if err := s.Delete(t.Context(), nil, "https://a.example"); apperr.CodeOf(err) != apperr.Forbidden {
		t.Errorf("Delete without a principal: %v", err)
	}
}

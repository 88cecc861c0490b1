package authserver

import (
	"slices"
	"testing"
)

// A client's shape ignores the order and repeats of its redirect URIs and tells apart a
// name, a URI set or an auth method.
func TestShapeOf(t *testing.T) {
	t.Parallel()
	a := shapeOf("Claude", []string{"https://a.example/cb", "https://b.example/cb"}, AuthMethodSecretPost)
	if b := shapeOf("Claude", []string{"https://b.example/cb", "https://a.example/cb", "https://b.example/cb"}, AuthMethodSecretPost); b != a {
		t.Fatalf("order and repeats changed the shape: %s vs %s", a, b)
	}
	for _, other := range []string{
		shapeOf("Claude ", []string{"https://a.example/cb", "https://b.example/cb"}, AuthMethodSecretPost),
		shapeOf("Claude", []string{"https://a.example/cb"}, AuthMethodSecretPost),
		shapeOf("Claude", []string{"https://a.example/cb", "https://b.example/cb"}, AuthMethodNone),
		// a name that would run into the URIs if they were concatenated
		shapeOf(`Claude","https://a.example/cb`, []string{"https://b.example/cb"}, AuthMethodSecretPost),
	} {
		if other == a {
			t.Fatalf("a different client has the same shape %s", a)
		}
	}
}

func TestRegisteredScopesAndMethods(t *testing.T) {
	t.Parallel()
	for asked, want := range map[string][]string{"": {"mcp"}, "openid profile": {"mcp"}, "mcp mcp offline_access": {"mcp"}, " mcp ": {"mcp"}} {
		if got := registeredScopes(asked); !slices.Equal(got, want) {
			t.Errorf("registeredScopes(%q) = %v, want %v", asked, got, want)
		}
	}
	for asked, want := range map[string]string{"": "none", "none": "none", "client_secret_post": "client_secret_post", "client_secret_basic": "client_secret_basic"} {
		if got, err := registeredAuthMethod(asked); err != nil || got != want {
			t.Errorf("registeredAuthMethod(%q) = %q, %v", asked, got, err)
		}
	}
	for _, bad := range []string{"private_key_jwt", "None", "client_secret_jwt"} {
		if _, err := registeredAuthMethod(bad); err == nil {
			t.Errorf("registeredAuthMethod(%q) accepted", bad)
		}
	}
}

// The secret hasher matches its own hash only; an empty stored hash matches nothing, the
// empty secret included.
func TestSecretHasher(t *testing.T) {
	t.Parallel()
	h := secretHasher{}
	hash, _ := h.Hash(t.Context(), []byte("s3cret"))
	if h.Compare(t.Context(), hash, []byte("s3cret")) != nil {
		t.Fatal("the secret does not match its hash")
	}
	for _, tc := range []struct{ hash, secret string }{{string(hash), "s3cret "}, {string(hash), ""}, {"", ""}, {"", "s3cret"}} {
		if h.Compare(t.Context(), []byte(tc.hash), []byte(tc.secret)) == nil {
			t.Errorf("hash %q matched secret %q", tc.hash, tc.secret)
		}
	}
}

package deps

import (
	"strings"
	"testing"

	"github.com/agentpack/gateway/shared/auth"
)

// TestRequireVerifier: a function without any way to verify bearer tokens (deployed with
// neither a signing key, a JWKS URL nor a secret) refuses to start, naming the settings.
func TestRequireVerifier(t *testing.T) {
	err := (&Deps{}).RequireVerifier()
	if err == nil || !strings.Contains(err.Error(), "AUTH_SIGNING_KMS_KEY_ID") {
		t.Fatalf("no verifier: %v", err)
	}
	v, err := auth.NewVerifier(t.Context(), auth.Options{Secret: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if err := (&Deps{Verifier: v}).RequireVerifier(); err != nil {
		t.Fatal(err)
	}
}

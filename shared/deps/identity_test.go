package deps

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/gateway/shared/testpeer"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
)

// motoSecrets starts moto_server (a real AWS API endpoint, on every machine of this
// project) on a loopback port and returns a Secrets Manager client for it.
func motoSecrets(t *testing.T) *secretsmanager.Client {
	t.Helper()
	url := testpeer.Moto(t)
	return secretsmanager.New(secretsmanager.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(url),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""),
	})
}

// TestSecretString: the identity provider's client secret and the session key come from
// Secrets Manager (moto) as plain text or JSON; errors never carry the value.
func TestSecretString(t *testing.T) {
	sm := motoSecrets(t)
	for i, tc := range []struct {
		name, secret, want, wantErr string
	}{
		{"plain", "s3cr3t-value", "s3cr3t-value", ""},
		{"json client_secret", `{"client_secret":"s3cr3t-json"}`, "s3cr3t-json", ""},
		{"json key", `{"key":"k3y-json"}`, "k3y-json", ""},
		{"json without the field", `{"password":"s3cr3t-other"}`, "", "without a client_secret"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := sm.CreateSecret(t.Context(), &secretsmanager.CreateSecretInput{
				Name: aws.String(fmt.Sprintf("idp-%d-%d", i, time.Now().UnixNano())), SecretString: aws.String(tc.secret)})
			if err != nil {
				t.Fatal(err)
			}
			got, err := SecretString(t.Context(), sm, aws.ToString(out.ARN), "identity provider client secret")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || strings.Contains(err.Error(), "s3cr3t") {
					t.Fatalf("err = %v, want %q without the value", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v", got, err)
			}
		})
	}
	if _, err := SecretString(t.Context(), sm, "arn:aws:secretsmanager:us-east-1:123456789012:secret:missing", "session key"); err == nil ||
		!strings.Contains(err.Error(), "session key") {
		t.Fatalf("missing secret: %v", err)
	}
}

// TestLocalSessionKey: created once (0600, 64 hex characters), then read back; a short
// file is refused.
func TestLocalSessionKey(t *testing.T) {
	p := filepath.Join(t.TempDir(), "sub", "session.key")
	k1, err := localSessionKey(p)
	if err != nil || len(k1) != 64 {
		t.Fatalf("create: %q %v", k1, err)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode())
	}
	if k2, err := localSessionKey(p); err != nil || k2 != k1 {
		t.Fatalf("read back: %v", err)
	}
	short := filepath.Join(t.TempDir(), "short.key")
	_ = os.WriteFile(short, []byte("abc"), 0o600)
	if _, err := localSessionKey(short); err == nil {
		t.Fatal("a short key file was accepted")
	}
}

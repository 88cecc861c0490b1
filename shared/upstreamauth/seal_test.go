package upstreamauth_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentpack/gateway/shared/testpeer"
	"github.com/agentpack/gateway/shared/upstreamauth"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/kms"
)

// sealerContract checks what every Sealer must do.
func sealerContract(t *testing.T, s upstreamauth.Sealer, other upstreamauth.Sealer) {
	t.Helper()
	ctx := context.Background()
	secret := []byte("at-0123456789-refresh-rt-secret")
	sealed, err := s.Seal(ctx, secret, []byte("grant|c1|"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, secret) {
		t.Fatal("sealed value contains the plaintext")
	}
	again, _ := s.Seal(ctx, secret, []byte("grant|c1|"))
	if bytes.Equal(sealed, again) {
		t.Error("two seals of one value are equal (nonce reuse?)")
	}
	got, err := s.Open(ctx, sealed, []byte("grant|c1|"))
	if err != nil || !bytes.Equal(got, secret) {
		t.Fatalf("Open = %q, %v", got, err)
	}
	tampered := bytes.Clone(sealed)
	tampered[len(tampered)-1] ^= 1
	for name, tc := range map[string]struct {
		v   []byte
		aad string
		s   upstreamauth.Sealer
	}{
		"other aad":    {sealed, "grant|c1|mallory", s},
		"tampered":     {tampered, "grant|c1|", s},
		"truncated":    {sealed[:10], "grant|c1|", s},
		"empty":        {nil, "grant|c1|", s},
		"other key":    {sealed, "grant|c1|", other},
		"other format": {append([]byte{9}, sealed[1:]...), "grant|c1|", s},
	} {
		if _, err := tc.s.Open(ctx, tc.v, []byte(tc.aad)); !errors.Is(err, upstreamauth.ErrSealed) {
			t.Errorf("%s: Open = %v, want ErrSealed", name, err)
		}
	}
}

func TestKeyFileSealer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "state", "upstream-auth.key")
	s, err := upstreamauth.NewKeyFileSealer(path)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 || fi.Size() != 32 {
		t.Fatalf("key file: %v %v", fi, err)
	}
	other, _ := upstreamauth.NewKeyFileSealer(filepath.Join(dir, "other.key"))
	sealerContract(t, s, other)
	// The same file opens what another process sealed.
	sealed, _ := s.Seal(context.Background(), []byte("x"), nil)
	s2, err := upstreamauth.NewKeyFileSealer(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s2.Open(context.Background(), sealed, nil); err != nil || string(got) != "x" {
		t.Errorf("reopened key file: %q %v", got, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "short.key"), []byte("short"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := upstreamauth.NewKeyFileSealer(filepath.Join(dir, "short.key")); err == nil {
		t.Error("a 5-byte key file was accepted")
	}
}

// TestKMSSealer runs the contract against AWS KMS as moto_server serves it (a real KMS API
// endpoint on loopback; installed on every machine of this project, see shared/deps).
func TestKMSSealer(t *testing.T) {
	t.Parallel()
	c := motoKMS(t)
	ctx := context.Background()
	key := func() string {
		out, err := c.CreateKey(ctx, &kms.CreateKeyInput{Description: aws.String("upstream auth test")})
		if err != nil {
			t.Fatal(err)
		}
		return *out.KeyMetadata.KeyId
	}
	s := upstreamauth.NewKMSSealer(c, key())
	sealerContract(t, s, upstreamauth.NewKMSSealer(c, key()))
}

func motoKMS(t *testing.T) *kms.Client {
	t.Helper()
	url := testpeer.Moto(t)
	return kms.New(kms.Options{Region: "us-east-1", BaseEndpoint: aws.String(url),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
}

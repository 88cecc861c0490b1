package signing_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/signing"
	"github.com/agentpack/gateway/shared/testpeer"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/kms/types"
)

// contract: a token signed by k verifies with k's public key through shared/auth (the
// gateway's verifier), names k's kid, and is refused for another resource.
func contract(t *testing.T, k *signing.Key) {
	t.Helper()
	ctx := context.Background()
	now := time.Now()
	claims, _ := json.Marshal(map[string]any{"sub": "p1", "role": "member", "workspaces": []string{"w1"}, "sid": "g1",
		"aud": []string{"https://gw.example/mcp"}, "iat": now.Unix(), "exp": now.Add(time.Minute).Unix()})
	tok, err := k.SignJWT(ctx, "at+jwt", claims)
	if err != nil {
		t.Fatal(err)
	}
	v, err := auth.NewVerifier(ctx, auth.Options{Issued: &auth.IssuedKey{KeyID: k.ID(), Key: k.Public()}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := v.VerifyResource(ctx, tok, "https://gw.example/mcp")
	if err != nil || p.Subject != "p1" || p.Grant != "g1" || p.Role != "member" {
		t.Fatalf("verify: %+v %v", p, err)
	}
	if _, err := v.VerifyResource(ctx, tok, "https://other.example/mcp"); err == nil {
		t.Fatal("a token for another resource verified")
	}
	if _, err := v.Verify(ctx, tok); err == nil {
		t.Fatal("Verify (no resource) accepted an issued token")
	}
	var jwks struct {
		Keys []map[string]string `json:"keys"`
	}
	if err := json.Unmarshal(k.JWKS(), &jwks); err != nil || len(jwks.Keys) != 1 || jwks.Keys[0]["kid"] != k.ID() || jwks.Keys[0]["alg"] != "RS256" {
		t.Fatalf("jwks: %s (%v)", k.JWKS(), err)
	}
}

func TestKeyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dir", "key.pem")
	k, err := signing.LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	contract(t, k)
	again, err := signing.LoadFile(path) // the same key is read back
	if err != nil || again.ID() != k.ID() {
		t.Fatalf("reload: %v, kid %s vs %s", err, again.ID(), k.ID())
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode: %v %v", fi.Mode(), err)
	}
	if _, err := signing.Parse([]byte("not a key")); err == nil {
		t.Fatal("Parse accepted garbage")
	}
}

// TestKMS signs through KMS Sign on moto_server (a real AWS API endpoint on loopback).
func TestKMS(t *testing.T) {
	c := kms.New(kms.Options{Region: "us-east-1", BaseEndpoint: aws.String(testpeer.Moto(t)),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
	ctx := context.Background()
	out, err := c.CreateKey(ctx, &kms.CreateKeyInput{KeySpec: types.KeySpecRsa2048, KeyUsage: types.KeyUsageTypeSignVerify,
		Description: aws.String("authorization server signing test")})
	if err != nil {
		t.Fatal(err)
	}
	k, err := signing.NewKMS(ctx, c, *out.KeyMetadata.KeyId)
	if err != nil {
		t.Fatal(err)
	}
	contract(t, k)
	// A key for encryption is refused.
	enc, err := c.CreateKey(ctx, &kms.CreateKeyInput{Description: aws.String("not a signing key")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := signing.NewKMS(ctx, c, *enc.KeyMetadata.KeyId); err == nil {
		t.Fatal("NewKMS accepted an ENCRYPT_DECRYPT key")
	}
}

// Package signing holds the key the gateway's authorization server signs its access tokens
// with (docs/AUTH.md "Signing key"): an asymmetric RSA key in AWS KMS (KMS Sign with
// RSASSA_PKCS1_V1_5_SHA_256, i.e. RS256; the private key never leaves KMS), or locally an
// RSA key in a PEM file under .state. Both give the same public key, key id and JWKS, so
// the gateway verifies the tokens the same way whichever signs them.
package signing

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/kms/types"
)

// Algorithm is the JWS algorithm of every token this package signs.
const Algorithm = "RS256"

// Key is a signing key: its public half, its key id (kid) and a way to sign.
type Key struct {
	id  string
	pub *rsa.PublicKey
	// sign returns the RS256 signature of msg (the JWS signing input).
	sign func(ctx context.Context, msg []byte) ([]byte, error)
}

// maxKMSMessage is KMS Sign's limit for a RAW message (bytes); an access token's signing
// input is well under 1 KiB.
const maxKMSMessage = 4096

// KMSAPI is the part of the KMS client a Key uses (*kms.Client satisfies it).
type KMSAPI interface {
	GetPublicKey(ctx context.Context, in *kms.GetPublicKeyInput, opts ...func(*kms.Options)) (*kms.GetPublicKeyOutput, error)
	Sign(ctx context.Context, in *kms.SignInput, opts ...func(*kms.Options)) (*kms.SignOutput, error)
}

// NewKMS returns the key keyID (id, ARN or alias) of KMS: an RSA key (KeySpec RSA_2048 or
// larger) with KeyUsage SIGN_VERIFY. It reads the public key once (kms:GetPublicKey); Sign
// calls kms:Sign. Errors: the key cannot be read, or it is not an RSA signing key.
func NewKMS(ctx context.Context, c KMSAPI, keyID string) (*Key, error) {
	out, err := c.GetPublicKey(ctx, &kms.GetPublicKeyInput{KeyId: aws.String(keyID)})
	if err != nil {
		return nil, fmt.Errorf("signing: kms GetPublicKey: %w", err)
	}
	if out.KeyUsage != types.KeyUsageTypeSignVerify {
		return nil, fmt.Errorf("signing: kms key %s has usage %s, want SIGN_VERIFY", keyID, out.KeyUsage)
	}
	pk, err := x509.ParsePKIXPublicKey(out.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("signing: kms public key: %w", err)
	}
	pub, ok := pk.(*rsa.PublicKey)
	if !ok {
		return nil, fmt.Errorf("signing: kms key %s is %T, want RSA", keyID, pk)
	}
	// RAW: KMS hashes the message itself (SHA-256 for this algorithm). RAW rather than
	// DIGEST because moto_server, the KMS of the tests, hashes a DIGEST message again.
	return &Key{id: keyIDOf(pub), pub: pub, sign: func(ctx context.Context, msg []byte) ([]byte, error) {
		if len(msg) > maxKMSMessage {
			return nil, fmt.Errorf("signing: %d bytes to sign, KMS takes at most %d", len(msg), maxKMSMessage)
		}
		out, err := c.Sign(ctx, &kms.SignInput{KeyId: aws.String(keyID), Message: msg,
			MessageType: types.MessageTypeRaw, SigningAlgorithm: types.SigningAlgorithmSpecRsassaPkcs1V15Sha256})
		if err != nil {
			return nil, fmt.Errorf("signing: kms Sign: %w", err)
		}
		return out.Signature, nil
	}}, nil
}

// LoadFile returns the RSA key in the PEM file path (PKCS#1 or PKCS#8). When the file does
// not exist it creates a 2048-bit key there (mode 0600, directories 0700): the local
// key of `make run` and tests. Errors: unreadable or not an RSA private key.
func LoadFile(path string) (*Key, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		k, gerr := rsa.GenerateKey(rand.Reader, 2048)
		if gerr != nil {
			return nil, fmt.Errorf("signing: generate: %w", gerr)
		}
		b = pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)})
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, fmt.Errorf("signing: %w", err)
		}
		// O_EXCL: two processes starting at once keep the first key written.
		f, ferr := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if ferr == nil {
			_, werr := f.Write(b)
			if cerr := f.Close(); werr == nil {
				werr = cerr
			}
			if werr != nil {
				return nil, fmt.Errorf("signing: write %s: %w", path, werr)
			}
		} else if b, err = os.ReadFile(path); err != nil {
			return nil, fmt.Errorf("signing: %w", err)
		}
	} else if err != nil {
		return nil, fmt.Errorf("signing: %w", err)
	}
	return Parse(b)
}

// Parse returns the key in PEM (an RSA private key, PKCS#1 or PKCS#8).
func Parse(pemBytes []byte) (*Key, error) {
	blk, _ := pem.Decode(pemBytes)
	if blk == nil {
		return nil, errors.New("signing: no PEM block")
	}
	var priv *rsa.PrivateKey
	if k, err := x509.ParsePKCS1PrivateKey(blk.Bytes); err == nil {
		priv = k
	} else if k8, err8 := x509.ParsePKCS8PrivateKey(blk.Bytes); err8 == nil {
		var ok bool
		if priv, ok = k8.(*rsa.PrivateKey); !ok {
			return nil, fmt.Errorf("signing: key is %T, want RSA", k8)
		}
	} else {
		return nil, fmt.Errorf("signing: parse key: %w", err)
	}
	return &Key{id: keyIDOf(&priv.PublicKey), pub: &priv.PublicKey,
		sign: func(_ context.Context, msg []byte) ([]byte, error) {
			digest := sha256.Sum256(msg)
			return rsa.SignPKCS1v15(rand.Reader, priv, crypto.SHA256, digest[:])
		}}, nil
}

// keyIDOf is the kid: the RFC 7638 JWK thumbprint of pub (base64url SHA-256).
func keyIDOf(pub *rsa.PublicKey) string {
	e := base64.RawURLEncoding.EncodeToString(big.NewInt(int64(pub.E)).Bytes())
	n := base64.RawURLEncoding.EncodeToString(pub.N.Bytes())
	sum := sha256.Sum256([]byte(`{"e":"` + e + `","kty":"RSA","n":"` + n + `"}`))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// ID returns the key id (kid) tokens carry in their header.
func (k *Key) ID() string { return k.id }

// Public returns the public key.
func (k *Key) Public() *rsa.PublicKey { return k.pub }

// JWKS returns the JSON Web Key Set (RFC 7517) holding the public key.
func (k *Key) JWKS() []byte {
	b, _ := json.Marshal(map[string]any{"keys": []map[string]string{{
		"kty": "RSA", "use": "sig", "alg": Algorithm, "kid": k.id,
		"n": base64.RawURLEncoding.EncodeToString(k.pub.N.Bytes()),
		"e": base64.RawURLEncoding.EncodeToString(big.NewInt(int64(k.pub.E)).Bytes()),
	}}})
	return b
}

// SignJWT returns the compact JWS of claims (a JSON object) with header {alg: RS256, typ,
// kid}. typ is the media type of the token ("at+jwt" for access tokens, RFC 9068).
func (k *Key) SignJWT(ctx context.Context, typ string, claims []byte) (string, error) {
	h, _ := json.Marshal(map[string]string{"alg": Algorithm, "typ": typ, "kid": k.id})
	var sb strings.Builder
	sb.WriteString(base64.RawURLEncoding.EncodeToString(h))
	sb.WriteByte('.')
	sb.WriteString(base64.RawURLEncoding.EncodeToString(claims))
	sig, err := k.sign(ctx, []byte(sb.String()))
	if err != nil {
		return "", err
	}
	sb.WriteByte('.')
	sb.WriteString(base64.RawURLEncoding.EncodeToString(sig))
	return sb.String(), nil
}

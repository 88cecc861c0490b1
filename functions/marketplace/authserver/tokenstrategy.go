package authserver

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/agentpack/gateway/shared/signing"
	"github.com/ory/fosite"
	"github.com/ory/fosite/token/jwt"
)

// jwtSigner is fosite's jwt.Signer over a signing.Key: access tokens are RS256 JWTs with
// typ at+jwt (RFC 9068), signed by KMS or the local key file. Only Generate and
// GetSignature are used (no introspection is composed); the gateway verifies with
// shared/auth.
type jwtSigner struct{ key *signing.Key }

var errNotComposed = errors.New("authserver: token introspection is not offered")

func (j *jwtSigner) Generate(ctx context.Context, claims jwt.MapClaims, _ jwt.Mapper) (string, string, error) {
	b, err := jsonMarshal(claims)
	if err != nil {
		return "", "", err
	}
	tok, err := j.key.SignJWT(ctx, "at+jwt", b)
	if err != nil {
		return "", "", err
	}
	return tok, tok[strings.LastIndexByte(tok, '.')+1:], nil
}

func (j *jwtSigner) Validate(context.Context, string) (string, error)   { return "", errNotComposed }
func (j *jwtSigner) Decode(context.Context, string) (*jwt.Token, error) { return nil, errNotComposed }
func (j *jwtSigner) Hash(_ context.Context, in []byte) ([]byte, error) {
	sum := sha256Sum(in)
	return sum[:], nil
}
func (j *jwtSigner) GetSignature(_ context.Context, token string) (string, error) {
	i := strings.LastIndexByte(token, '.')
	if i < 0 {
		return "", errors.New("authserver: not a JWT")
	}
	return token[i+1:], nil
}
func (j *jwtSigner) GetSigningMethodLength(context.Context) int { return 32 }

// opaque issues authorization codes and refresh tokens as 256 random bits; the stored
// signature is their SHA-256, so a database read never yields a usable token and no
// server-side secret has to be shared between instances (fosite's HMAC strategy needs one).
type opaque struct{}

func (opaque) sig(token string) string {
	sum := sha256.Sum256([]byte(token))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

func (o opaque) generate(prefix string) (string, string, error) {
	t := prefix + randomID() + randomID()
	return t, o.sig(t), nil
}

func (o opaque) AccessTokenSignature(_ context.Context, t string) string { return o.sig(t) }
func (o opaque) RefreshTokenSignature(_ context.Context, t string) string {
	return o.sig(t)
}
func (o opaque) AuthorizeCodeSignature(_ context.Context, t string) string { return o.sig(t) }
func (o opaque) GenerateAccessToken(context.Context, fosite.Requester) (string, string, error) {
	return o.generate("apa_")
}
func (o opaque) GenerateRefreshToken(context.Context, fosite.Requester) (string, string, error) {
	return o.generate("apr_")
}
func (o opaque) GenerateAuthorizeCode(context.Context, fosite.Requester) (string, string, error) {
	return o.generate("apc_")
}
func (o opaque) ValidateAccessToken(_ context.Context, r fosite.Requester, _ string) error {
	return notExpired(r, fosite.AccessToken)
}
func (o opaque) ValidateRefreshToken(_ context.Context, r fosite.Requester, _ string) error {
	return notExpired(r, fosite.RefreshToken)
}
func (o opaque) ValidateAuthorizeCode(_ context.Context, r fosite.Requester, _ string) error {
	return notExpired(r, fosite.AuthorizeCode)
}

func notExpired(r fosite.Requester, tt fosite.TokenType) error {
	exp := r.GetSession().GetExpiresAt(tt)
	if !exp.IsZero() && exp.Before(time.Now().UTC()) {
		return fosite.ErrTokenExpired.WithHintf("The %s expired.", tt)
	}
	return nil
}

func sha256Sum(b []byte) [32]byte { return sha256.Sum256(b) }

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

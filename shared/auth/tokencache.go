package auth

import (
	"context"
	"crypto/sha256"
	"time"
	"unsafe"

	"github.com/maypok86/otter/v2"
)

// DefaultTokenCacheSize is how many verified tokens a Verifier remembers (NewVerifier).
const DefaultTokenCacheSize = 10000

// TokenCache remembers verified principals by the SHA-256 of their bearer token (the token
// itself is never kept) together with the resource it was verified for, each until its
// token expires, at most a fixed number of entries
// (otter's W-TinyLFU evicts the least likely to be used again). It sits at the verifier
// boundary and is generic: any verifier that reports a token's expiry can go through it.
// A failed verification is never cached. Safe for concurrent use.
type TokenCache struct {
	c   *otter.Cache[tokenKey, verified]
	now func() time.Time
}

// tokenKey is a cache key: the token's SHA-256 and the resource, side by side in a
// fixed-size comparable value, so that building it per request allocates nothing (no
// resource+token concatenation) and a token cached for one resource never answers for
// another.
type tokenKey struct {
	token    [32]byte
	resource string
}

type verified struct {
	p       Principal
	expires time.Time
}

// NewTokenCache returns a cache of at most size entries (at least 1).
func NewTokenCache(size int) *TokenCache {
	return &TokenCache{now: time.Now, c: otter.Must(&otter.Options[tokenKey, verified]{
		MaximumSize: max(size, 1),
		Executor:    func(fn func()) { fn() }, // maintenance on the caller: no goroutine
	})}
}

// Verify returns the principal of token for resource ("" for none): the cached one while
// the token has not expired, else verify's, cached until the expiry verify reports (a zero
// expiry is not cached). Errors are verify's. The principal returned is the caller's copy.
func (c *TokenCache) Verify(ctx context.Context, resource, token string, verify func(context.Context, string) (*Principal, time.Time, error)) (*Principal, error) {
	// The token's bytes are hashed in place: sha256.Sum256 only reads them, and a
	// []byte(token) conversion would copy the token to the heap on every request.
	key := tokenKey{token: sha256.Sum256(unsafe.Slice(unsafe.StringData(token), len(token))), resource: resource}
	if v, ok := c.c.GetIfPresent(key); ok {
		if c.now().Before(v.expires) {
			p := v.p
			return &p, nil
		}
		c.c.Invalidate(key)
	}
	p, exp, err := verify(ctx, token)
	if err != nil {
		return nil, err
	}
	if !exp.IsZero() && c.now().Before(exp) {
		c.c.Set(key, verified{p: *p, expires: exp})
	}
	return p, nil
}

// Len is how many tokens are cached now (tests, metrics).
func (c *TokenCache) Len() int { return c.c.EstimatedSize() }

package auth

import (
	"context"
	"testing"
	"time"
)

// BenchmarkVerifyResourceCached is a bearer token answered from the verifier's cache, the
// path of every call after a token's first: what the cache key costs per request.
// go test -run='^$' -bench=VerifyResourceCached -benchmem ./shared/auth
func BenchmarkVerifyResourceCached(b *testing.B) {
	v, err := NewVerifier(context.Background(), Options{Secret: "s"})
	if err != nil {
		b.Fatal(err)
	}
	tok, err := Mint("s", Principal{Subject: "7f3a9c1e-0000-4000-8000-000000000001", Role: RoleMember,
		Workspaces: []string{"dddddddd-0000-4000-8000-000000000004"}, Groups: []string{"engineering", "design"}}, time.Hour)
	if err != nil {
		b.Fatal(err)
	}
	const resource = "https://gw.example.com/mcp"
	ctx := context.Background()
	if _, err := v.VerifyResource(ctx, tok, resource); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.VerifyResource(ctx, tok, resource); err != nil {
			b.Fatal(err)
		}
	}
}

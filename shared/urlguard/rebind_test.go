package urlguard_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/gateway/shared/testpeer"
	"github.com/agentpack/gateway/shared/urlguard"
)

// TestDialTimeRebinding: a name that passes CheckURL (it is a name, not a blocked literal)
// but resolves, when dialled, to loopback is refused by the dialer, with ErrBlockedAddress
// and the reason; with AllowPrivate the same name connects. The name resolves through a
// test DNS server, so the test runs the same on every machine.
func TestDialTimeRebinding(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("reached")) }))
	t.Cleanup(srv.Close)
	su, _ := url.Parse(srv.URL)
	res := testpeer.Resolver(t, map[string][]netip.Addr{"rebound.example.test": {netip.MustParseAddr("127.0.0.1")}})
	target := "http://rebound.example.test:" + su.Port() + "/"

	strict := urlguard.New(&urlguard.Options{Resolver: res})
	if err := strict.CheckURL(target); err != nil {
		t.Fatalf("CheckURL(%s) = %v; the name itself is not refusable", target, err)
	}
	_, err := strict.HTTPClient(5 * time.Second).Get(target)
	var be *urlguard.BlockedError
	if !errors.Is(err, urlguard.ErrBlockedAddress) || !errors.As(err, &be) || be.Reason != "loopback" || be.Addr != netip.MustParseAddr("127.0.0.1") {
		t.Fatalf("strict dial of a name resolving to loopback: %v (%+v)", err, be)
	}

	local := urlguard.New(&urlguard.Options{AllowPrivate: true, Resolver: res})
	resp, err := local.HTTPClient(5 * time.Second).Get(target)
	if err != nil {
		t.Fatalf("AllowPrivate dial: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || string(body) != "reached" {
		t.Fatalf("AllowPrivate answer %q (%v)", body, err)
	}

	// An unknown name is NXDOMAIN from the test server: a lookup error, not a block.
	_, err = local.HTTPClient(5 * time.Second).Get("http://unknown.example.test:" + su.Port() + "/")
	if err == nil || errors.Is(err, urlguard.ErrBlockedAddress) || !strings.Contains(err.Error(), "no such host") {
		t.Fatalf("unknown name: %v", err)
	}
}

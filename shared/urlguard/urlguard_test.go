package urlguard

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/agentpack/gateway/shared/apperr"
)

func TestCheckURL(t *testing.T) {
	t.Parallel()
	strict := New(nil)
	https := New(&Options{RequireHTTPS: true})
	local := New(&Options{AllowPrivate: true})
	tests := []struct {
		url     string
		strict  string // "" = accepted; else a substring of the VALIDATION_ERROR message
		https   string
		private string
	}{
		{"https://mcp.example.com/mcp", "", "", ""},
		{"http://mcp.example.com:8080/sse", "", "must use https", ""},
		{"https://93.184.216.34/mcp", "", "", ""},
		{"https://[2606:4700::1111]/mcp", "", "", ""},
		{"file:///etc/passwd", "http or https", "https", "http or https"},
		{"gopher://127.0.0.1:25/", "http or https", "https", "http or https"},
		{"ftp://example.com/", "http or https", "https", "http or https"},
		{"javascript:alert(1)", "http or https", "https", "http or https"},
		{"", "empty", "empty", "empty"},
		{"http:/mcp", "no host", "https", "no host"},
		{"http:opaque", "no host", "https", "no host"},
		{"https://user:pass@example.com/", "user information", "user information", "user information"},
		{"https://@example.com/", "user information", "user information", "user information"},
		{"http://169.254.169.254/latest/meta-data/", "cloud metadata", "https", "cloud metadata"},
		{"http://[fd00:ec2::254]/", "cloud metadata", "https", "cloud metadata"},
		{"http://127.0.0.1:8080/mcp", "loopback", "https", ""},
		{"http://[::1]/", "loopback", "https", ""},
		{"http://[::ffff:127.0.0.1]/", "loopback", "https", ""},
		{"http://[::ffff:a9fe:a9fe]/", "cloud metadata", "https", "cloud metadata"},
		{"http://[64:ff9b::a00:1]/", "private", "https", ""},
		{"http://[2002:c0a8:101::]/", "private", "https", ""},
		{"http://10.1.2.3/", "private", "https", ""},
		{"http://172.16.0.1/", "private", "https", ""},
		{"http://192.168.1.1/", "private", "https", ""},
		{"http://100.64.0.1/", "CGNAT", "https", ""},
		{"http://169.254.1.1/", "link-local", "https", ""},
		{"http://[fe80::1%25eth0]/", "link-local", "https", ""},
		{"http://[fc00::1]/", "unique-local", "https", ""},
		{"http://0.0.0.0/", "unspecified", "https", "unspecified"},
		{"http://[::]/", "unspecified", "https", "unspecified"},
		{"http://224.0.0.1/", "multicast", "https", "multicast"},
		{"http://[ff02::1]/", "multicast", "https", "multicast"},
		{"http://255.255.255.255/", "reserved", "https", "reserved"},
		{"http://0x7f000001/", "non-standard", "https", "non-standard"},
		{"http://127.1/", "non-standard", "https", "non-standard"},
		{"http://2130706433/", "non-standard", "https", "non-standard"},
		{"http://017700000001/", "non-standard", "https", "non-standard"},
		{"http://127.0.0.0x1/", "non-standard", "https", "non-standard"},
		{"http://localhost:3000/mcp", "localhost", "https", ""},
		{"http://LOCALHOST./mcp", "localhost", "https", ""},
		{"http://api.localhost/", "localhost", "https", ""},
		{"https://example.com:99999/", "invalid port", "invalid port", "invalid port"},
		{"https://example.com:0/", "invalid port", "invalid port", "invalid port"},
		{"https://exa mple.com/", "not a valid URL", "not a valid URL", "not a valid URL"},
		{"https://example.com/\r\nHost: x", "not a valid URL", "not a valid URL", "not a valid URL"},
		{"https://" + strings.Repeat("a", MaxURLBytes) + ".com/", "bytes long", "bytes long", "bytes long"},
	}
	for _, tc := range tests {
		for _, c := range []struct {
			mode string
			g    *Guard
			want string
		}{{"strict", strict, tc.strict}, {"https", https, tc.https}, {"private", local, tc.private}} {
			err := c.g.CheckURL(tc.url)
			if c.want == "" {
				if err != nil {
					t.Errorf("%s CheckURL(%.80q) = %v, want nil", c.mode, tc.url, err)
				}
				continue
			}
			e := apperr.As(err)
			if e == nil || e.Code != apperr.Validation {
				t.Errorf("%s CheckURL(%.80q) = %v, want VALIDATION_ERROR", c.mode, tc.url, err)
				continue
			}
			if !strings.Contains(e.Message, c.want) {
				t.Errorf("%s CheckURL(%.80q) message %q, want it to mention %q", c.mode, tc.url, e.Message, c.want)
			}
		}
	}
}

func TestCheckAddr(t *testing.T) {
	t.Parallel()
	strict := New(nil)
	for _, s := range []string{"127.0.0.1", "::1", "10.0.0.1", "169.254.169.254", "::ffff:10.0.0.1", "fe80::1", "0.0.0.0"} {
		err := strict.CheckAddr(netip.MustParseAddr(s))
		if !errors.Is(err, ErrBlockedAddress) {
			t.Errorf("CheckAddr(%s) = %v, want ErrBlockedAddress", s, err)
		}
	}
	for _, s := range []string{"8.8.8.8", "2606:4700::1111", "172.32.0.1", "100.128.0.1"} {
		if err := strict.CheckAddr(netip.MustParseAddr(s)); err != nil {
			t.Errorf("CheckAddr(%s) = %v, want nil", s, err)
		}
	}
}

// TestDialHook shows the dial-time check: a name resolving to 127.0.0.1 is refused by the
// strict guard's client even though nothing checked the URL first, and allowed with
// AllowPrivate.
func TestDialHook(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	port := srv.URL[strings.LastIndexByte(srv.URL, ':')+1:]

	for _, target := range []string{srv.URL, "http://localhost:" + port + "/"} {
		_, err := New(nil).HTTPClient(0).Get(target)
		var be *BlockedError
		if !errors.Is(err, ErrBlockedAddress) || !errors.As(err, &be) {
			t.Fatalf("strict GET %s = %v, want ErrBlockedAddress", target, err)
		}
		if be.Reason != "loopback" {
			t.Errorf("reason = %q, want loopback", be.Reason)
		}

		resp, err := New(&Options{AllowPrivate: true}).HTTPClient(0).Get(target)
		if err != nil {
			t.Fatalf("AllowPrivate GET %s: %v", target, err)
		}
		resp.Body.Close()
	}
}

func TestNoRedirect(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/start" {
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
			return
		}
		t.Errorf("redirect followed to %s", r.URL)
	}))
	t.Cleanup(srv.Close)
	resp, err := New(&Options{AllowPrivate: true}).HTTPClient(0).Get(srv.URL + "/start")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Errorf("status = %d, want 302 returned as is", resp.StatusCode)
	}
}

func TestNoEnvironmentProxy(t *testing.T) {
	t.Parallel()
	if New(nil).Transport().Proxy != nil {
		t.Fatal("transport uses a proxy; the dial check would see the proxy's address")
	}
}

// FuzzCheckURL asserts CheckURL never panics, always answers VALIDATION_ERROR on refusal,
// and that whatever the strict guard accepts has an http(s) scheme, a host, no userinfo, and
// no literal blocked IP.
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{
		"https://mcp.example.com/mcp", "http://169.254.169.254/", "http://[::ffff:127.0.0.1]/",
		"http://0x7f000001/", "http://127.1/", "file:///etc/passwd", "https://u:p@h/",
		"http://[fe80::1%25eth0]/", "http://localhost./", "http://[64:ff9b::7f00:1]/",
	} {
		f.Add(s)
	}
	strict := New(&Options{})
	f.Fuzz(func(t *testing.T, raw string) {
		err := strict.CheckURL(raw)
		if err != nil {
			if apperr.CodeOf(err) != apperr.Validation {
				t.Fatalf("CheckURL(%q) = %v, not VALIDATION_ERROR", raw, err)
			}
			return
		}
		u, perr := parseForTest(raw)
		if perr != nil {
			t.Fatalf("accepted unparsable %q: %v", raw, perr)
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			t.Fatalf("accepted scheme %q in %q", u.Scheme, raw)
		}
		if u.User != nil || u.Hostname() == "" {
			t.Fatalf("accepted %q (userinfo or no host)", raw)
		}
		if addr, err := netip.ParseAddr(u.Hostname()); err == nil {
			if strict.CheckAddr(addr) != nil {
				t.Fatalf("accepted blocked literal %q", raw)
			}
		}
		if isLocalName(u.Hostname()) {
			t.Fatalf("accepted local name %q", raw)
		}
	})
}

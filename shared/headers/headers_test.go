package headers

import (
	"bufio"
	"net/http"
	"strings"
	"testing"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/google/go-cmp/cmp"
)

func TestValidateAccepts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		h    map[string]string
	}{
		{"nil", nil},
		{"empty", map[string]string{}},
		{"bearer", map[string]string{"Authorization": "Bearer abc.def-ghi_jkl"}},
		{"api key", map[string]string{"X-API-Key": "k", "x-tenant": "acme"}},
		{"tab inside", map[string]string{"X-Note": "a\tb"}},
		{"cookie allowed", map[string]string{"Cookie": "session=abc; theme=dark"}},
		{"empty value", map[string]string{"X-Empty": ""}},
		{"all tchars", map[string]string{"!#$%&'*+-.^_`|~09azAZ": "v"}},
		{"utf8 value", map[string]string{"X-Name": "José Müller"}},
		{"max count", manyHeaders(MaxHeaders, 1)},
		{"max value", map[string]string{"X-Big": strings.Repeat("a", MaxValueBytes)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if err := Validate(tc.h); err != nil {
				t.Fatalf("Validate = %v, want nil", err)
			}
		})
	}
}

func TestValidateRefuses(t *testing.T) {
	t.Parallel()
	const secret = "s3cr3t-value"
	tests := []struct {
		name    string
		h       map[string]string
		mention string // the message must contain this
	}{
		{"CRLF in value", map[string]string{"X-A": secret + "\r\nX-Injected: 1"}, `"X-A"`},
		{"LF in value", map[string]string{"X-A": secret + "\nfoo"}, "control character"},
		{"CR in value", map[string]string{"X-A": secret + "\r"}, "control character"},
		{"NUL in value", map[string]string{"X-A": secret + "\x00"}, "control character"},
		{"DEL in value", map[string]string{"X-A": secret + "\x7f"}, "control character"},
		{"ESC in value", map[string]string{"X-A": "\x1b[31m" + secret}, "control character"},
		{"leading space", map[string]string{"X-A": " " + secret}, "whitespace"},
		{"trailing tab", map[string]string{"X-A": secret + "\t"}, "whitespace"},
		{"empty name", map[string]string{"": secret}, "empty"},
		{"space in name", map[string]string{"X A": secret}, "not a valid HTTP field name"},
		{"colon in name", map[string]string{"X-A:": secret}, "not a valid HTTP field name"},
		{"CRLF in name", map[string]string{"X-A\r\nX-B": secret}, `"X-A\r\nX-B"`},
		{"non-ASCII name", map[string]string{"X-Ä": secret}, "not a valid HTTP field name"},
		{"name too long", map[string]string{strings.Repeat("x", MaxNameBytes+1): secret}, "bytes long"},
		{"Host", map[string]string{"host": "evil.example"}, `"host"`},
		{"Connection", map[string]string{"CONNECTION": "close"}, "hop-by-hop"},
		{"Keep-Alive", map[string]string{"Keep-Alive": "timeout=5"}, "hop-by-hop"},
		{"Transfer-Encoding", map[string]string{"Transfer-Encoding": "chunked"}, "hop-by-hop"},
		{"TE", map[string]string{"te": "trailers"}, "hop-by-hop"},
		{"Trailer", map[string]string{"Trailer": "X"}, "hop-by-hop"},
		{"Upgrade", map[string]string{"Upgrade": "websocket"}, "hop-by-hop"},
		{"Proxy-Authorization", map[string]string{"Proxy-Authorization": secret}, "hop-by-hop"},
		{"Proxy-Authenticate", map[string]string{"proxy-authenticate": secret}, "hop-by-hop"},
		{"Content-Length", map[string]string{"Content-Length": "0"}, "MCP transport"},
		{"Content-Type", map[string]string{"content-type": "text/plain"}, "MCP transport"},
		{"Accept", map[string]string{"Accept": "text/html"}, "MCP transport"},
		{"Mcp-Session-Id", map[string]string{"Mcp-Session-Id": "x"}, "MCP transport"},
		{"Mcp-Protocol-Version", map[string]string{"mcp-protocol-version": "2025-06-18"}, "MCP transport"},
		{"Mcp-Method", map[string]string{"Mcp-Method": "tools/call"}, "MCP transport"},
		{"Mcp-Name", map[string]string{"MCP-NAME": "x"}, "MCP transport"},
		{"Last-Event-ID", map[string]string{"Last-Event-Id": "1"}, "MCP transport"},
		{"X-Forwarded-For", map[string]string{"X-Forwarded-For": "1.2.3.4"}, "proxies"},
		{"Forwarded", map[string]string{"Forwarded": "for=1.2.3.4"}, "proxies"},
		{"X-GoLambdaProxy", map[string]string{"X-GoLambdaProxy-ApiGw-Context": "{}"}, "Lambda"},
		{"duplicate by case", map[string]string{"X-Key": "a", "x-key": "b"}, "declared twice"},
		{"too many", manyHeaders(MaxHeaders+1, 1), "at most 32"},
		{"value too long", map[string]string{"X-Big": strings.Repeat("a", MaxValueBytes+1)}, "at most 8192"},
		{"total too large", manyHeaders(5, MaxValueBytes), "total size"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := Validate(tc.h)
			e := apperr.As(err)
			if e == nil {
				t.Fatalf("Validate = %v, want *apperr.Error", err)
			}
			if e.Code != apperr.Validation {
				t.Errorf("code = %s, want %s", e.Code, apperr.Validation)
			}
			if !strings.Contains(e.Message, tc.mention) {
				t.Errorf("message %q does not mention %q", e.Message, tc.mention)
			}
			if strings.Contains(e.Error(), secret) {
				t.Errorf("message %q leaks the header value", e.Error())
			}
		})
	}
}

func TestValidateDeterministic(t *testing.T) {
	t.Parallel()
	h := map[string]string{"b\n": "x", "a\n": "x", "c\n": "x"}
	first := Validate(h).Error()
	for range 20 {
		if got := Validate(h).Error(); got != first {
			t.Fatalf("Validate message varies: %q vs %q", got, first)
		}
	}
	if !strings.Contains(first, `"a\n"`) {
		t.Errorf("want the first name in sorted order, got %q", first)
	}
}

func TestRedact(t *testing.T) {
	t.Parallel()
	got := Redact(map[string]string{"Authorization": "Bearer x", "X-Key": "y"})
	want := map[string]string{"Authorization": RedactedValue, "X-Key": RedactedValue}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Redact (-want +got):\n%s", diff)
	}
	if r := Redact(nil); r == nil || len(r) != 0 {
		t.Errorf("Redact(nil) = %#v, want an empty map", r)
	}
}

func manyHeaders(n, valueLen int) map[string]string {
	h := make(map[string]string, n)
	for i := range n {
		h["X-H"+strings.Repeat("i", i)] = strings.Repeat("v", valueLen)
	}
	return h
}

// FuzzValidate asserts that Validate never panics and that whatever it accepts is safe: the
// header survives an HTTP/1.1 request serialisation and parse intact, adds no other header,
// and is not reserved.
func FuzzValidate(f *testing.F) {
	for _, s := range [][2]string{
		{"Authorization", "Bearer x"},
		{"X-A", "a\r\nX-Injected: 1"},
		{"X-A\r\n", "v"},
		{"Host", "evil"},
		{"Mcp-Session-Id", "1"},
		{"x", "\x00"},
		{"X-B", "\tv"},
		{"Cookie", "a=b"},
		{"X-Ä", "ü"},
		{"", ""},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, name, value string) {
		err := Validate(map[string]string{name: value})
		if err != nil {
			if apperr.CodeOf(err) != apperr.Validation {
				t.Fatalf("error %v is not a VALIDATION_ERROR", err)
			}
			if len(value) >= 16 && !strings.Contains(name, value) && strings.Contains(err.Error(), value) {
				t.Fatalf("error %q leaks value %q", err, value)
			}
			return
		}
		if _, r := Reserved(name); r {
			t.Fatalf("accepted reserved name %q", name)
		}
		if strings.ContainsAny(value, "\r\n\x00") || strings.ContainsAny(name, "\r\n\x00: ") {
			t.Fatalf("accepted unsafe header %q: %q", name, value)
		}
		req, rerr := http.NewRequest(http.MethodPost, "http://upstream.test/mcp", strings.NewReader("{}"))
		if rerr != nil {
			t.Fatal(rerr)
		}
		req.Header.Set(name, value)
		var buf strings.Builder
		if werr := req.Write(&buf); werr != nil {
			t.Fatalf("accepted header %q: %q cannot be written: %v", name, value, werr)
		}
		back, perr := http.ReadRequest(bufio.NewReader(strings.NewReader(buf.String())))
		if perr != nil {
			t.Fatalf("accepted header %q: %q does not parse back: %v", name, value, perr)
		}
		if got := back.Header.Values(name); len(got) != 1 || got[0] != value {
			t.Fatalf("header %q round-tripped as %q, want [%q]", name, got, value)
		}
		for k := range back.Header {
			if k != http.CanonicalHeaderKey(name) && k != "Content-Length" && k != "User-Agent" {
				t.Fatalf("accepted header %q: %q produced extra header %q", name, value, k)
			}
		}
	})
}

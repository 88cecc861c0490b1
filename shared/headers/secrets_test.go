package headers_test

import (
	"strings"
	"testing"

	"github.com/agentpack/gateway/shared/headers"
)

func TestRedactURL(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in, want string }{
		{"plain", "https://mcp.example.com/v1/mcp", "https://mcp.example.com/v1/mcp"},
		{"query values", "https://h/mcp?api_key=sk-1&mode=x", "https://h/mcp?api_key=[REDACTED]&mode=[REDACTED]"},
		{"bare query token", "https://h/mcp?sk-secret-token", "https://h/mcp?[REDACTED]"},
		{"userinfo", "https://user:pw@h:8443/mcp", "https://[REDACTED]@h:8443/mcp"},
		{"fragment", "http://h/mcp#key=abc", "http://h/mcp#[REDACTED]"},
		{"all", "http://u:p@h/p?k=v#f", "http://[REDACTED]@h/p?k=[REDACTED]#[REDACTED]"},
		{"empty", "", ""},
		{"not a URL", "%zz?key=1", "[REDACTED]"},
		{"no host", "/mcp?api_key=sk", "[REDACTED]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := headers.RedactURL(tc.in); got != tc.want {
				t.Errorf("RedactURL(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestPublicURL(t *testing.T) {
	t.Parallel()
	if got := headers.PublicURL("https://u:p@h/v1/mcp?api_key=sk#f"); got != "https://h/v1/mcp" {
		t.Errorf("PublicURL = %q", got)
	}
	if got := headers.PublicURL("%zz"); got != "" {
		t.Errorf("PublicURL of garbage = %q", got)
	}
}

func TestScrubURLs(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in, want string }{
		{"net/http error", `Post "http://127.0.0.1:9/mcp?api_key=sk-live-1": dial tcp 127.0.0.1:9: connect: connection refused`,
			`Post "http://127.0.0.1:9/mcp?api_key=[REDACTED]": dial tcp 127.0.0.1:9: connect: connection refused`},
		{"sentence end", "see https://h/mcp?k=secretvalue.", "see https://h/mcp?k=[REDACTED]."},
		{"two URLs", "a http://h/x?k=1 b HTTPS://g/y#z", "a http://h/x?k=[REDACTED] b https://g/y#[REDACTED]"},
		{"nothing to do", "no url here", "no url here"},
		{"clean URL kept", "http://h/mcp failed", "http://h/mcp failed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := headers.ScrubURLs(tc.in); got != tc.want {
				t.Errorf("ScrubURLs = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestScrub(t *testing.T) {
	t.Parallel()
	raw := "https://alice:pa55word@h/mcp?api_key=sk%2Blive%2F42&v=2&token=tok-abcdef#frag-secret"
	h := map[string]string{"Authorization": "Bearer hdr-secret-1", "X-Blank": " "}
	msg := "upstream echoed sk+live/42 and sk%2Blive%2F42, pa55word, tok-abcdef, frag-secret, " +
		"Bearer hdr-secret-1 from " + raw + " (v=2 stays)"
	got := headers.Scrub(msg, raw, h)
	for _, secret := range []string{"sk+live/42", "sk%2Blive%2F42", "pa55word", "tok-abcdef", "frag-secret", "hdr-secret-1", "alice"} {
		if strings.Contains(got, secret) {
			t.Errorf("Scrub left %q in %q", secret, got)
		}
	}
	if !strings.Contains(got, "(v=2 stays)") {
		t.Errorf("Scrub shredded a short, non-secret value: %q", got)
	}
	if !strings.Contains(got, "https://[REDACTED]@h/mcp?api_key=[REDACTED]") {
		t.Errorf("Scrub did not keep the redacted URL's shape: %q", got)
	}
}

func TestCheckURLNotRedacted(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{"https://h/mcp?api_key=[REDACTED]", "https://h/mcp?api_key=%5BREDACTED%5D", "https://h/mcp#[REDACTED]"} {
		if err := headers.CheckURLNotRedacted(raw); err == nil {
			t.Errorf("%s accepted", raw)
		}
	}
	if err := headers.CheckURLNotRedacted("https://h/mcp?api_key=sk-1"); err != nil {
		t.Errorf("a real URL refused: %v", err)
	}
}

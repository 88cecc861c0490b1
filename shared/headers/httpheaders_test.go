package headers_test

import (
	"net/http"
	"reflect"
	"testing"

	"github.com/agentpack/gateway/shared/headers"
)

func TestScrubHTTP(t *testing.T) {
	in := http.Header{
		"Authorization":        {"Bearer abc"},
		"Proxy-Authorization":  {"Basic xyz"},
		"Cookie":               {"sid=1", "theme=dark"},
		"Set-Cookie":           {"sid=2"},
		"X-Api-Key":            {"k1"},
		"X-Amz-Security-Token": {"aws"},
		"Mcp-Session-Id":       {"s-123"},
		"X-Auth-Token":         {"t"},
		"Private-Token":        {"gl"},
		"x-upstream-secret":    {"s"}, // not canonical: matched in any case
		"Accept":               {"application/json"},
		"Mcp-Protocol-Version": {"2025-11-25"},
		"X-Request-Id":         {"r1"},
	}
	want := http.Header{
		"Authorization":        {"[REDACTED]"},
		"Proxy-Authorization":  {"[REDACTED]"},
		"Cookie":               {"[REDACTED]", "[REDACTED]"},
		"Set-Cookie":           {"[REDACTED]"},
		"X-Api-Key":            {"[REDACTED]"},
		"X-Amz-Security-Token": {"[REDACTED]"},
		"Mcp-Session-Id":       {"[REDACTED]"},
		"X-Auth-Token":         {"[REDACTED]"},
		"Private-Token":        {"[REDACTED]"},
		"x-upstream-secret":    {"[REDACTED]"},
		"Accept":               {"application/json"},
		"Mcp-Protocol-Version": {"2025-11-25"},
		"X-Request-Id":         {"r1"},
	}
	got := headers.ScrubHTTP(in)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ScrubHTTP:\n got %v\nwant %v", got, want)
	}
	if in.Get("Authorization") != "Bearer abc" {
		t.Error("ScrubHTTP changed its input")
	}
	got["Accept"][0] = "changed"
	if in.Get("Accept") != "application/json" {
		t.Error("ScrubHTTP's copy shares values with its input")
	}
	if headers.ScrubHTTP(nil) != nil {
		t.Error("nil is not nil")
	}
}

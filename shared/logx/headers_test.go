package logx_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/agentpack/gateway/shared/logx"
)

// TestHTTPHeaderScrubbed: an http.Header logged as an attribute (top level, in a group, or
// bound with With) shows its credentials as the one redaction token, and its other
// headers as they are.
func TestHTTPHeaderScrubbed(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	h := http.Header{"Authorization": {"Bearer tok-secret"}, "Cookie": {"sid=cookie-secret"},
		"Mcp-Session-Id": {"session-secret"}, "Accept": {"application/json"}}
	logx.New(&buf, "info").With("bound", h).InfoContext(context.Background(), "request",
		"headers", h, slog.Group("g", "headers", h))
	line := buf.String()
	for _, s := range []string{"tok-secret", "cookie-secret", "session-secret"} {
		if strings.Contains(line, s) {
			t.Errorf("%s logged: %s", s, line)
		}
	}
	var rec struct {
		Headers http.Header `json:"headers"`
		Bound   http.Header `json:"bound"`
		G       struct {
			Headers http.Header `json:"headers"`
		} `json:"g"`
	}
	if err := json.Unmarshal([]byte(line), &rec); err != nil {
		t.Fatal(err)
	}
	for _, got := range []http.Header{rec.Headers, rec.Bound, rec.G.Headers} {
		if got.Get("Authorization") != "[REDACTED]" || got.Get("Accept") != "application/json" {
			t.Errorf("logged headers %v", got)
		}
	}
	if h.Get("Authorization") != "Bearer tok-secret" {
		t.Error("the caller's header was changed")
	}
}

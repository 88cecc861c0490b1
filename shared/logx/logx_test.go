package logx_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/agentpack/gateway/shared/logx"
)

// TestURLSecretsNeverLogged: a URL with an API key in its query, userinfo or fragment is
// redacted wherever it appears in a line — message, string, error (wrapped, as net/http
// and go-sdk quote it), Stringer, group, WithAttrs — and other values pass unchanged.
func TestURLSecretsNeverLogged(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	l := logx.New(&buf, "debug")
	const raw = "http://user:pw-secret@127.0.0.1:9/mcp?api_key=sk-query-secret#frag-secret"
	urlErr := fmt.Errorf("calling upstream: %w", fmt.Errorf(`Post %q: dial tcp 127.0.0.1:9: connect: connection refused`, raw))
	l.With("base", raw).WithGroup("g").ErrorContext(logx.WithRequestID(context.Background(), "rid-1"),
		"connect to "+raw+" failed", "err", urlErr, "url", raw, "n", 42,
		slog.Group("inner", "u", raw), "s", stringer(raw), "plain", errors.New("no url"))
	out := buf.String()
	for _, s := range []string{"sk-query-secret", "pw-secret", "frag-secret", "user:"} {
		if strings.Contains(out, s) {
			t.Errorf("log line contains %q: %s", s, out)
		}
	}
	for _, s := range []string{`api_key=[REDACTED]`, `"n":42`, `"plain":"no url"`, `"request_id":"rid-1"`, `connection refused`} {
		if !strings.Contains(out, s) {
			t.Errorf("log line lacks %s: %s", s, out)
		}
	}
}

type stringer string

func (s stringer) String() string { return string(s) }

// TestAtLeast: records below the floor are dropped, others pass, and loggers derived with
// With and WithGroup keep the floor.
func TestAtLeast(t *testing.T) {
	var buf bytes.Buffer
	l := logx.AtLeast(slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})), slog.LevelWarn)
	l.Info("server connecting")
	l.With("k", "v").WithGroup("g").Info("session initialized")
	l.Warn("kept", "n", 1)
	l.With("k", "v").Error("kept too")
	out := buf.String()
	if strings.Contains(out, "server connecting") || strings.Contains(out, "session initialized") ||
		!strings.Contains(out, `"msg":"kept"`) || !strings.Contains(out, `"msg":"kept too","k":"v"`) {
		t.Errorf("AtLeast(Warn) wrote:\n%s", out)
	}
}

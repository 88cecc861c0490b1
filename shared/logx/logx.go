// Package logx builds the JSON slog logger every function uses and carries request-scoped
// attributes (request id) through contexts. Keys are stable: err, request_id, tool,
// connection_id, duration_ms, error_id (STYLE.md). Header values and tokens are never
// logged, and every URL in a message, a string or an error is written through
// headers.ScrubURLs (query values, userinfo and fragment redacted): net/http and go-sdk
// quote the whole upstream URL in their errors, and some upstreams take an API key in the
// query (issue 14 item 7).
package logx

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/agentpack/gateway/shared/headers"
)

// New returns a JSON logger writing to w (os.Stdout when nil) at level ("debug", "info",
// "warn", "error"; default info).
func New(w io.Writer, level string) *slog.Logger {
	if w == nil {
		w = os.Stdout
	}
	var l slog.Level
	switch strings.ToLower(level) {
	case "debug":
		l = slog.LevelDebug
	case "warn":
		l = slog.LevelWarn
	case "error":
		l = slog.LevelError
	}
	return slog.New(&ctxHandler{slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l})})
}

type requestIDKey struct{}

// WithRequestID returns ctx carrying the request id that every log line made with a
// *Context call will include as request_id.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestID returns the request id carried by ctx, or "".
func RequestID(ctx context.Context) string {
	s, _ := ctx.Value(requestIDKey{}).(string)
	return s
}

type ctxHandler struct{ slog.Handler }

func (h *ctxHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, headers.ScrubURLs(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(scrubAttr(a))
		return true
	})
	if id := RequestID(ctx); id != "" {
		out.AddAttrs(slog.String("request_id", id))
	}
	return h.Handler.Handle(ctx, out)
}

func (h *ctxHandler) WithAttrs(as []slog.Attr) slog.Handler {
	scrubbed := make([]slog.Attr, len(as))
	for i, a := range as {
		scrubbed[i] = scrubAttr(a)
	}
	return &ctxHandler{h.Handler.WithAttrs(scrubbed)}
}

// scrubAttr returns a with URLs in its text redacted: strings, errors, fmt.Stringers and
// other values printed as text, and groups member by member. Numbers, times and the like
// pass unchanged.
func scrubAttr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		if s := v.String(); strings.Contains(s, "://") {
			return slog.String(a.Key, headers.ScrubURLs(s))
		}
	case slog.KindGroup:
		g := v.Group()
		out := make([]slog.Attr, len(g))
		for i, m := range g {
			out[i] = scrubAttr(m)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(out...)}
	case slog.KindAny:
		var text string
		switch x := v.Any().(type) {
		case error:
			text = x.Error()
		case fmt.Stringer:
			text = x.String()
		default:
			return slog.Attr{Key: a.Key, Value: v}
		}
		if strings.Contains(text, "://") {
			return slog.String(a.Key, headers.ScrubURLs(text))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}

func (h *ctxHandler) WithGroup(name string) slog.Handler {
	return &ctxHandler{h.Handler.WithGroup(name)}
}

// Discard is a logger that drops everything (for benchmarks).
var Discard = slog.New(slog.DiscardHandler)

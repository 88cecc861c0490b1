// Package logx builds the JSON slog logger every function uses and carries request-scoped
// attributes (request id) through contexts. Keys are stable: err, request_id, tool,
// connection_id, duration_ms, error_id (STYLE.md). Header values and tokens are never
// logged.
package logx

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strings"
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
	if id := RequestID(ctx); id != "" {
		r.AddAttrs(slog.String("request_id", id))
	}
	return h.Handler.Handle(ctx, r)
}

func (h *ctxHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &ctxHandler{h.Handler.WithAttrs(as)}
}

func (h *ctxHandler) WithGroup(name string) slog.Handler {
	return &ctxHandler{h.Handler.WithGroup(name)}
}

// Discard is a logger that drops everything (for benchmarks).
var Discard = slog.New(slog.DiscardHandler)

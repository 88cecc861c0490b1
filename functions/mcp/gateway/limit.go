package gateway

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// plainErrorCode picks the JSON-RPC code for one of go-sdk's plain-text refusals.
func plainErrorCode(msg string) int {
	switch {
	case strings.Contains(msg, "unsupported") || strings.Contains(msg, "not handled"):
		return jsonrpc.CodeMethodNotFound
	case strings.Contains(msg, "malformed") || strings.Contains(msg, "invalid character") ||
		strings.Contains(msg, "unexpected end") || strings.Contains(msg, "parse"):
		return jsonrpc.CodeParseError
	}
	return jsonrpc.CodeInvalidRequest
}

// limitedWriter buffers a response (API Gateway buffers it anyway) so that one larger
// than limit bytes can be replaced by a clear JSON-RPC error instead of a payload Lambda
// would refuse (6 MB synchronous limit).
type limitedWriter struct {
	http.ResponseWriter
	limit   int
	status  int
	buf     bytes.Buffer
	tooBig  bool
	flushed bool
}

func (w *limitedWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *limitedWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if w.tooBig {
		return len(p), nil
	}
	if w.buf.Len()+len(p) > w.limit {
		w.tooBig = true
		w.buf.Reset()
		return len(p), nil
	}
	return w.buf.Write(p)
}

// Flush is a no-op: the response is sent whole by finish.
func (w *limitedWriter) Flush() {}

func (w *limitedWriter) finish() {
	if w.flushed {
		return
	}
	w.flushed = true
	if w.tooBig {
		w.Header().Del("Content-Length")
		writeHTTPErrorCode(w.ResponseWriter, http.StatusOK, -32603,
			"response exceeds the gateway's "+strconv.Itoa(w.limit)+"-byte limit")
		return
	}
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if w.status >= 400 && strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
		// go-sdk answers some transport-level refusals (unknown method, unparsable body) in
		// plain text; MCP clients expect a JSON-RPC error object, so give them one.
		msg := strings.TrimSpace(w.buf.String())
		w.Header().Del("X-Content-Type-Options")
		writeHTTPErrorCode(w.ResponseWriter, w.status, plainErrorCode(msg), msg)
		return
	}
	if w.buf.Len() > 0 {
		w.Header().Set("Content-Length", strconv.Itoa(w.buf.Len()))
	}
	w.ResponseWriter.WriteHeader(w.status)
	_, _ = w.ResponseWriter.Write(w.buf.Bytes())
}

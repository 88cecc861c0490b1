package gateway

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/agentpack/gateway/functions/mcp/gateway/message"
	"github.com/agentpack/gateway/functions/mcp/gateway/wire"
	"github.com/agentpack/gateway/shared/jsonobj"
	"github.com/agentpack/gateway/shared/mcpclient"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

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
	id      json.RawMessage // the id of a response too big to send, so the error can carry it
	// reqID is the id of the request being answered when the edge read one (serveRPC), so
	// that go-sdk's plain-text refusals can be answered under it.
	reqID json.RawMessage
}

// restoreID puts the client's id back into a buffered go-sdk answer that carries the
// stand-in id (serveRPC), and into the id of a too-large answer's error.
func (w *limitedWriter) restoreID(id json.RawMessage) {
	if w.tooBig {
		if bytes.Equal(w.id, standInID) {
			w.id = id
		}
		return
	}
	b := w.buf.Bytes()
	if got := message.ResponseID(b[:min(len(b), 1024)]); !bytes.Equal(got, standInID) {
		return
	}
	if out, err := jsonobj.SetMember(b, "id", id); err == nil {
		w.buf.Reset()
		w.buf.Write(out)
	}
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
		w.id = message.ResponseID(append(w.buf.Bytes()[:w.buf.Len():w.buf.Len()], p[:min(len(p), 1024)]...))
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
		// With the request's id, so that the client matches the error to its call instead
		// of waiting for an answer that never comes.
		w.Header().Set("Content-Type", "application/json")
		w.ResponseWriter.WriteHeader(http.StatusOK)
		id := w.id
		if id == nil {
			id = json.RawMessage("null")
		}
		_, _ = w.ResponseWriter.Write(wire.Response(id, nil, wire.Refusal(jsonrpc.CodeInternalError,
			"response exceeds the gateway's "+strconv.Itoa(w.limit)+"-byte limit")))
		return
	}
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if w.status >= 400 && strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
		// go-sdk answers some transport-level refusals (unknown method, unparsable body) in
		// plain text; MCP clients expect a JSON-RPC error object, so give them one.
		//
		// An unknown method on a request the edge could read is a JSON-RPC error like any
		// other: under the request's id and with HTTP 200, so that a client's JSON-RPC layer
		// gets it (the TypeScript SDK raises a transport error, not an McpError, for a 4xx;
		// MCP 2025-11-25 "Transports" asks for nothing else). At 2026-07-28 go-sdk answers
		// that case itself, as a JSON 404 (the revision's transport chapter), not here.
		msg := strings.TrimSpace(w.buf.String())
		w.Header().Del("X-Content-Type-Options")
		code, status := mcpclient.PlainRefusalCode(msg), w.status
		if code == jsonrpc.CodeMethodNotFound && w.reqID != nil {
			status = http.StatusOK
		}
		wire.WriteHTTP(w.ResponseWriter, status, w.reqID, wire.Refusal(code, msg))
		return
	}
	if w.buf.Len() > 0 {
		w.Header().Set("Content-Length", strconv.Itoa(w.buf.Len()))
	}
	w.ResponseWriter.WriteHeader(w.status)
	_, _ = w.ResponseWriter.Write(w.buf.Bytes())
}

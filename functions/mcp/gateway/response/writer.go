// Package response buffers the gateway's answer to one MCP POST before it is sent: the
// whole answer is held ([Writer]; API Gateway buffers it anyway) so that one larger than
// the limit becomes a clear JSON-RPC error under the request's id instead of a payload
// Lambda would refuse (6 MB synchronous limit), go-sdk's plain-text refusals become
// JSON-RPC errors, the client's own id can be put back ([Writer.RestoreID]), a buffered
// answer can be edited ([Writer.Edit]), and a JSON answer can become a text/event-stream
// carrying relayed notifications ([Writer.Relay], [Acceptable]).
package response

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

// Writer buffers a response (API Gateway buffers it anyway) so that one larger
// than limit bytes can be replaced by a clear JSON-RPC error instead of a payload Lambda
// would refuse (6 MB synchronous limit).
type Writer struct {
	http.ResponseWriter
	limit   int
	status  int
	buf     bytes.Buffer
	tooBig  bool
	flushed bool
	id      json.RawMessage // the id of a response too big to send, so the error can carry it
	// RequestID is the id of the request being answered when the edge read one, so that
	// go-sdk's plain-text refusals can be answered under it; nil answers them with id null.
	RequestID json.RawMessage
}

// RestoreID puts the client's id back into a buffered go-sdk answer that carries the
// stand-in id standIn (the edge shows go-sdk standIn in place of id, which go-sdk would
// round were it a large integer), and into the id of a too-large answer's error.
func (w *Writer) RestoreID(id, standIn json.RawMessage) {
	if w.tooBig {
		if bytes.Equal(w.id, standIn) {
			w.id = id
		}
		return
	}
	b := w.buf.Bytes()
	if got := message.ResponseID(b[:min(len(b), 1024)]); !bytes.Equal(got, standIn) {
		return
	}
	if out, err := jsonobj.SetMember(b, "id", id); err == nil {
		w.buf.Reset()
		w.buf.Write(out)
	}
}

// WriteHeader records the first status; it is sent by Finish.
func (w *Writer) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

// Write buffers p; past the limit it drops the answer, keeping its id for the error.
func (w *Writer) Write(p []byte) (int, error) {
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

// Flush is a no-op: the response is sent whole by Finish.
func (w *Writer) Flush() {}

// Finish sends the buffered answer once (later calls do nothing): the -32603 error under
// the answer's id when it passed the limit, a go-sdk plain-text refusal as a JSON-RPC
// error, else the buffered status and bytes with their Content-Length.
func (w *Writer) Finish() {
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
		if code == jsonrpc.CodeMethodNotFound && w.RequestID != nil {
			status = http.StatusOK
		}
		wire.WriteHTTP(w.ResponseWriter, status, w.RequestID, wire.Refusal(code, msg))
		return
	}
	if w.buf.Len() > 0 {
		w.Header().Set("Content-Length", strconv.Itoa(w.buf.Len()))
	}
	w.ResponseWriter.WriteHeader(w.status)
	_, _ = w.ResponseWriter.Write(w.buf.Bytes())
}

// New returns a Writer over w that answers -32603 in place of an answer larger than limit
// bytes.
func New(w http.ResponseWriter, limit int) *Writer {
	return &Writer{ResponseWriter: w, limit: limit}
}

// Edit replaces a buffered 200 answer (not one past the limit) with edit's result when
// edit reports true; the result is not held to the limit.
func (w *Writer) Edit(edit func(body []byte) ([]byte, bool)) {
	if w.tooBig || w.status != 200 {
		return
	}
	if out, ok := edit(w.buf.Bytes()); ok {
		w.buf.Reset()
		w.buf.Write(out)
	}
}

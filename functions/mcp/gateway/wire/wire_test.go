package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestResponse: ids are echoed byte for byte (null when absent); results go as given,
// encoded without HTML escaping; a *jsonrpc.Error passes; any other error, and a result
// that cannot be encoded, is -32603 "internal error".
func TestResponse(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		id     json.RawMessage
		result any
		err    error
		want   string
	}{
		{"raw result, big id", json.RawMessage(`123456789012345678901234567890`), json.RawMessage(`{"a":1}`), nil,
			`{"jsonrpc":"2.0","id":123456789012345678901234567890,"result":{"a":1}}`},
		{"encoded result, no id", nil, map[string]string{"t": "<b>&"}, nil,
			`{"jsonrpc":"2.0","id":null,"result":{"t":"<b>&"}}`},
		{"json-rpc error", json.RawMessage(`"x"`), nil, &jsonrpc.Error{Code: -32602, Message: "bad"},
			`{"jsonrpc":"2.0","id":"x","error":{"code":-32602,"message":"bad"}}`},
		{"plain error", json.RawMessage(`1`), nil, errors.New("password=hunter2"),
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"internal error"}}`},
		{"unencodable result", json.RawMessage(`1`), map[string]any{"f": func() {}}, nil,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"internal error"}}`},
	}
	for _, c := range cases {
		if got := string(Response(c.id, c.result, c.err)); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}

// TestRefuse: an edge refusal takes its HTTP status and JSON-RPC code from apperr's
// tables; a 5xx carries the logged errorId, a 4xx only the message.
func TestRefuse(t *testing.T) {
	t.Parallel()
	cases := []struct {
		err      error
		id       string
		status   int
		code     int64
		withData bool
	}{
		{apperr.New(apperr.Forbidden, "no access to this workspace"), "", 403, -32600, false},
		{apperr.New(apperr.NotFound, "no such server in this workspace"), "", 404, -32600, false},
		{apperr.Wrap(errors.New("s3 down"), apperr.Unavailable, "catalog unavailable"), "e-1", 503, -32603, true},
	}
	for _, c := range cases {
		rec := httptest.NewRecorder()
		Refuse(rec, c.err, c.id)
		var body struct {
			ID    json.RawMessage
			Error struct {
				Code    int64
				Message string
				Data    *apperr.RPCData
			}
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Fatal(err)
		}
		if rec.Code != c.status || body.Error.Code != c.code || string(body.ID) != "null" ||
			(body.Error.Data != nil) != c.withData || rec.Header().Get("Content-Type") != "application/json" {
			t.Errorf("%v: %d %s", c.err, rec.Code, rec.Body)
		}
		if c.withData && (body.Error.Data.ErrorID != c.id || !body.Error.Data.Retryable || body.Error.Data.Code != apperr.Unavailable) {
			t.Errorf("%v: data %+v", c.err, body.Error.Data)
		}
	}
}

// TestInternal: the client sees a generic message and the errorId of the log line, never
// the error's text.
func TestInternal(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	je := Internal(context.Background(), slog.New(slog.NewJSONHandler(&logs, nil)), "tools/list", errors.New("dial postgres://u:hunter2@db"), nil)
	var data apperr.RPCData
	if err := json.Unmarshal(je.Data, &data); err != nil {
		t.Fatal(err)
	}
	if je.Code != jsonrpc.CodeInternalError || je.Message != "internal error" || data.ErrorID == "" || data.Code != apperr.Internal {
		t.Fatalf("%+v %s", je, je.Data)
	}
	if !strings.Contains(logs.String(), data.ErrorID) {
		t.Fatalf("log line lacks errorId %s: %s", data.ErrorID, logs.String())
	}
	if strings.Contains(je.Message+string(je.Data), "hunter2") {
		t.Fatal("internals leak to the client")
	}
	panicked := Internal(context.Background(), slog.New(slog.DiscardHandler), "tools/call", errors.New("panic"), "boom")
	if panicked.Code != jsonrpc.CodeInternalError || strings.Contains(string(panicked.Data), "boom") {
		t.Fatalf("panic answer %+v", panicked)
	}
}

// TestUpstreamFailureAndFailure: an unclassified upstream failure is UPSTREAM_ERROR, not
// INTERNAL_ERROR; classified ones keep their code; Failure carries them under -32603.
func TestUpstreamFailureAndFailure(t *testing.T) {
	t.Parallel()
	f := UpstreamFailure(errors.New("session refused"), "e-2", "request")
	if f.Code != apperr.UpstreamError || f.Message != "upstream request failed" || f.Retryable || f.ErrorID != "e-2" {
		t.Fatalf("%+v", f)
	}
	f = UpstreamFailure(context.DeadlineExceeded, "e-3", "call")
	if f.Code != apperr.UpstreamTimeout || !f.Retryable {
		t.Fatalf("%+v", f)
	}
	je := Failure(f, "e-3")
	var data apperr.RPCData
	_ = json.Unmarshal(je.Data, &data)
	if je.Code != -32603 || data.Code != apperr.UpstreamTimeout || !data.Retryable || data.ErrorID != "e-3" {
		t.Fatalf("%+v %s", je, je.Data)
	}
}

// TestSeal: the envelope is both text and structuredContent, isError exactly when !ok,
// and data {} on an empty success.
func TestSeal(t *testing.T) {
	t.Parallel()
	ok := Seal(EnvelopeMeta{Tool: "t", Version: "1"}, nil, nil)
	if ok.IsError || string(ok.StructuredContent.(json.RawMessage)) != `{"ok":true,"data":{},"meta":{"tool":"t","version":"1"}}` {
		t.Fatalf("%+v", ok)
	}
	bad := SealJSON(EnvelopeMeta{Tool: "t", Version: "upstream"}, &EnvelopeError{Code: apperr.UpstreamTimeout, Message: "m", Retryable: true})
	if !bytes.Contains(bad, []byte(`"isError":true`)) || !bytes.Contains(bad, []byte(`UPSTREAM_TIMEOUT`)) {
		t.Fatalf("%s", bad)
	}
	rec := httptest.NewRecorder()
	WriteInvalidRequest(rec, http.StatusMethodNotAllowed, "use POST")
	if rec.Code != 405 || !strings.Contains(rec.Body.String(), `"code":-32600`) {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
}

// TestErrorStatus: SEP-2575's HTTP status per JSON-RPC error code at 2026-07-28 (the
// table go-sdk's streamable handler applies): 404 for -32601, 400 for -32602, -32022 and
// -32021 and -32020, 200 for the rest (-32603, -32042 …).
func TestErrorStatus(t *testing.T) {
	for code, want := range map[int64]int{
		jsonrpc.CodeMethodNotFound: http.StatusNotFound,
		jsonrpc.CodeInvalidParams:  http.StatusBadRequest,
		-32022:                     http.StatusBadRequest,
		-32021:                     http.StatusBadRequest,
		-32020:                     http.StatusBadRequest,
		jsonrpc.CodeInternalError:  http.StatusOK,
		-32042:                     http.StatusOK,
		-32050:                     http.StatusOK,
	} {
		if got := ErrorStatus(code); got != want {
			t.Errorf("ErrorStatus(%d) = %d, want %d", code, got, want)
		}
	}
}

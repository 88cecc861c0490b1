package mcpclient

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentpack/gateway/shared/apperr"
)

// forwardUpstream answers initialize like any server and every tools/call with answer,
// which gets the request's raw id.
func forwardUpstream(t *testing.T, answer func(w http.ResponseWriter, id string)) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal(body, &m)
		switch {
		case m.ID == nil:
			w.WriteHeader(http.StatusAccepted)
		case m.Method == "initialize":
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"f","version":"1"}}}`)
		default:
			answer(w, string(m.ID))
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// TestForwardErrorAnswers: the forwarding path's error paths. A 4xx carrying a JSON-RPC
// error passes the upstream's error through (RPCError); an answer to another id, an event
// stream whose event is not JSON-RPC, or one that ends before the response is a protocol
// error (UPSTREAM_ERROR), never a result; a 5xx is UPSTREAM_UNAVAILABLE.
func TestForwardErrorAnswers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		answer  func(w http.ResponseWriter, id string)
		rpcCode int64
		code    apperr.Code
	}{
		{"400 with a JSON-RPC error", func(w http.ResponseWriter, id string) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"error":{"code":-32602,"message":"bad arguments"}}`)
		}, -32602, apperr.UpstreamError},
		{"answer to another id", func(w http.ResponseWriter, id string) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":"someone-else","result":{"content":[]}}`)
		}, 0, apperr.UpstreamError},
		{"event that is not JSON-RPC", func(w http.ResponseWriter, id string) {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, "data: {not json\n\n")
		}, 0, apperr.UpstreamError},
		{"stream ends before the response", func(w http.ResponseWriter, id string) {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, ": ping\n\n")
		}, 0, apperr.UpstreamError},
		{"503", func(w http.ResponseWriter, id string) { w.WriteHeader(http.StatusServiceUnavailable) }, 0, apperr.UpstreamUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := newPool(t, &Options{FixedVersion: true})
			res, err := p.Forward(t.Context(), Target{ConnectionID: "e", URL: forwardUpstream(t, tc.answer)},
				"tools/call", json.RawMessage(`{"name":"x","arguments":{}}`), nil)
			if err == nil {
				t.Fatalf("result %s, want an error", res)
			}
			if e := apperr.As(err); e == nil || e.Code != tc.code {
				t.Fatalf("err = %v, want %s", err, tc.code)
			}
			rpc := RPCError(err)
			if tc.rpcCode != 0 && (rpc == nil || rpc.Code != tc.rpcCode || !strings.Contains(rpc.Message, "bad arguments")) {
				t.Errorf("RPCError = %v, want the upstream's %d", rpc, tc.rpcCode)
			}
			if tc.rpcCode == 0 && rpc != nil {
				t.Errorf("RPCError = %v for a gateway-side failure", rpc)
			}
		})
	}
}

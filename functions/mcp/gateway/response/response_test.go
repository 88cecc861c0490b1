package response

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// rpcError decodes a JSON-RPC error answer.
func rpcError(t *testing.T, body string) (id string, code int, msg string) {
	t.Helper()
	var m struct {
		ID    json.RawMessage `json:"id"`
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("not JSON: %v: %s", err, body)
	}
	return string(m.ID), m.Error.Code, m.Error.Message
}

func TestWriterWithinLimit(t *testing.T) {
	t.Parallel()
	rec := httptest.NewRecorder()
	w := New(rec, 100)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
	w.WriteHeader(http.StatusTeapot) // the first status stands
	_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
	if rec.Body.Len() != 0 {
		t.Fatal("written before Finish")
	}
	w.Finish()
	w.Finish() // once
	if rec.Code != http.StatusAccepted || rec.Body.String() != `{"jsonrpc":"2.0","id":1,"result":{}}` || rec.Header().Get("Content-Length") != "36" {
		t.Errorf("got %d %q (Content-Length %q)", rec.Code, rec.Body, rec.Header().Get("Content-Length"))
	}
}

// TestWriterOverLimit: an answer past the limit becomes -32603 under the answer's id,
// also when the id is in the write that passes it.
func TestWriterOverLimit(t *testing.T) {
	t.Parallel()
	for _, chunks := range [][]string{
		{`{"jsonrpc":"2.0","id":"big","result":{"x":"`, strings.Repeat("a", 200), `"}}`},
		{`{"jsonrpc":"2.0","id":"big","result":{"x":"` + strings.Repeat("a", 200) + `"}}`},
	} {
		rec := httptest.NewRecorder()
		w := New(rec, 100)
		for _, c := range chunks {
			if n, err := w.Write([]byte(c)); n != len(c) || err != nil {
				t.Fatalf("Write = %d, %v", n, err)
			}
		}
		w.Finish()
		id, code, msg := rpcError(t, rec.Body.String())
		if rec.Code != http.StatusOK || id != `"big"` || code != -32603 || !strings.Contains(msg, "100-byte limit") {
			t.Errorf("%d chunks: %d %s", len(chunks), rec.Code, rec.Body)
		}
	}
	// No id readable: null.
	rec := httptest.NewRecorder()
	w := New(rec, 10)
	_, _ = w.Write([]byte(strings.Repeat("x", 20)))
	w.Finish()
	if id, code, _ := rpcError(t, rec.Body.String()); id != "null" || code != -32603 {
		t.Errorf("no id: %s", rec.Body)
	}
}

// TestWriterPlainRefusal: go-sdk's plain-text refusals become JSON-RPC errors; an unknown
// method under a request id read by the edge is HTTP 200.
func TestWriterPlainRefusal(t *testing.T) {
	t.Parallel()
	rec := httptest.NewRecorder()
	w := New(rec, 1000)
	w.RequestID = json.RawMessage(`5`)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusNotFound)
	_, _ = w.Write([]byte("method \"x/y\" not handled\n")) // go-sdk's words
	w.Finish()
	id, code, _ := rpcError(t, rec.Body.String())
	if rec.Code != http.StatusOK || id != "5" || code != -32601 {
		t.Errorf("unknown method: %d %s", rec.Code, rec.Body)
	}
	rec = httptest.NewRecorder()
	w = New(rec, 1000)
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = w.Write([]byte("invalid request body"))
	w.Finish()
	if id, _, msg := rpcError(t, rec.Body.String()); rec.Code != http.StatusBadRequest || id != "null" || msg != "invalid request body" {
		t.Errorf("a 400 refusal: %d %s", rec.Code, rec.Body)
	}
}

func TestRestoreIDAndEdit(t *testing.T) {
	t.Parallel()
	standIn := json.RawMessage(`1`)
	rec := httptest.NewRecorder()
	w := New(rec, 1000)
	_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
	w.RestoreID(json.RawMessage(`123456789012345678901`), standIn)
	w.Edit(func(b []byte) ([]byte, bool) { return []byte(strings.Replace(string(b), "{}", `{"x":1}`, 1)), true })
	w.Edit(func(b []byte) ([]byte, bool) { return []byte("dropped"), false })
	w.Finish()
	if got := rec.Body.String(); got != `{"jsonrpc":"2.0","id":123456789012345678901,"result":{"x":1}}` {
		t.Errorf("got %s", got)
	}
	// An answer without the stand-in id is left as it is; an error status is not edited.
	rec = httptest.NewRecorder()
	w = New(rec, 1000)
	w.WriteHeader(http.StatusBadRequest)
	_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":9,"error":{}}`))
	w.RestoreID(json.RawMessage(`"c"`), standIn)
	w.Edit(func([]byte) ([]byte, bool) { return []byte("edited"), true })
	w.Finish()
	if got := rec.Body.String(); got != `{"jsonrpc":"2.0","id":9,"error":{}}` {
		t.Errorf("got %s", got)
	}
}

func TestRelay(t *testing.T) {
	t.Parallel()
	answer := `{"jsonrpc":"2.0","id":1,"result":{}}`
	newW := func(limit int) (*httptest.ResponseRecorder, *Writer) {
		rec := httptest.NewRecorder()
		w := New(rec, limit)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(answer))
		return rec, w
	}
	rec, w := newW(1000)
	w.Relay([][]byte{[]byte(`{"method":"notifications/progress"}`)}, false)
	w.Finish()
	want := "event: message\ndata: {\"method\":\"notifications/progress\"}\n\nevent: message\ndata: " + answer + "\n\n"
	if rec.Body.String() != want || rec.Header().Get("Content-Type") != "text/event-stream" {
		t.Errorf("relayed: %q (%s)", rec.Body, rec.Header().Get("Content-Type"))
	}
	rec, w = newW(1000)
	w.Relay(nil, false)
	w.Finish()
	if rec.Body.String() != answer {
		t.Errorf("no events, not forced: %q", rec.Body)
	}
	rec, w = newW(1000)
	w.Relay(nil, true)
	w.Finish()
	if rec.Body.String() != "event: message\ndata: "+answer+"\n\n" {
		t.Errorf("forced: %q", rec.Body)
	}
	rec, w = newW(len(answer) + 10) // the stream would pass the limit: the answer is kept
	w.Relay([][]byte{[]byte(`{"method":"notifications/progress"}`)}, false)
	w.Finish()
	if rec.Body.String() != answer || rec.Header().Get("Content-Type") != "application/json" {
		t.Errorf("over the limit: %q", rec.Body)
	}
}

func TestAcceptable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		accept       []string
		json, stream bool
	}{
		{nil, true, true},
		{[]string{"application/json, text/event-stream"}, true, true},
		{[]string{"application/json"}, true, false},
		{[]string{"text/event-stream"}, false, true},
		{[]string{"*/*"}, true, true},
		{[]string{"application/*"}, true, false},
		{[]string{"text/*"}, false, true},
		{[]string{"application/json;q=0, text/event-stream"}, false, true},
		{[]string{"text/html"}, false, false},
	}
	for _, tt := range tests {
		j, s := Acceptable(tt.accept)
		if j != tt.json || s != tt.stream {
			t.Errorf("Acceptable(%q) = %v, %v; want %v, %v", tt.accept, j, s, tt.json, tt.stream)
		}
	}
}

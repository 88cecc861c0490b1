package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/shared/testpeer"
)

// edgeEnv is a stack with one workspace, an admin token, and a stateful Go fixture
// installed as a connection.
type edgeEnv struct {
	env            *stacktest.Env
	ws, admin      string
	connID, handle string
	up             *testpeer.Fixture
}

func newEdgeEnv(t *testing.T) *edgeEnv {
	t.Helper()
	up := testpeer.NewFixture(t, &testpeer.FixtureOptions{Mode: testpeer.ModeStateful})
	bundle := setupWith(t, "Edge", "Edge", up.URL)
	env, ws, admin, c := bundle.env, bundle.ws, bundle.admin, bundle.conn
	return &edgeEnv{env: env, ws: ws, admin: admin, connID: c.ID, handle: c.Handle, up: up}
}

// post sends body to the aggregate endpoint with the given Accept ("-" for none).
func (e *edgeEnv) post(t *testing.T, body, accept string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.env.URL+"/mcp/"+e.ws, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+e.admin)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	if accept != "-" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// rpcError decodes a JSON-RPC error answer: its raw id and error code.
func rpcError(t *testing.T, body []byte) (id string, code int) {
	t.Helper()
	var m struct {
		ID    json.RawMessage
		Error *struct{ Code int }
	}
	if err := json.Unmarshal(body, &m); err != nil || m.Error == nil {
		t.Fatalf("not a JSON-RPC error (%v): %s", err, body)
	}
	return string(m.ID), m.Error.Code
}

// TestJSONRPCFidelity (issue 14 item 1): an empty batch and ids of types JSON-RPC does not
// allow are refused with -32600 and id null, never answered under an id the client did not
// send; integers of any length and strings with escapes come back byte for byte, on the
// edge's own methods and on those go-sdk serves.
func TestJSONRPCFidelity(t *testing.T) {
	t.Parallel()
	e := newEdgeEnv(t)
	for _, body := range []string{
		`[]`, ` [ ] `,
		`{"jsonrpc":"2.0","id":true,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":{},"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":[1],"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1e3,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":null,"method":"ping"}`,
	} {
		resp, b := e.post(t, body, "application/json, text/event-stream")
		id, code := rpcError(t, b)
		if resp.StatusCode != http.StatusBadRequest || code != -32600 || id != "null" {
			t.Errorf("%s: %d id %s code %d, want 400 -32600 id null (%s)", body, resp.StatusCode, id, code, b)
		}
	}
	for _, id := range []string{`12345678901234567890123`, `9007199254740993`, `-7`, `0`, `"a\u00e9\"b"`, `"x"`} {
		for _, method := range []string{"tools/list", "ping", "initialize"} {
			params := `{}`
			if method == "initialize" {
				params = `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`
			}
			resp, b := e.post(t, `{"jsonrpc":"2.0","id":`+id+`,"method":"`+method+`","params":`+params+`}`, "application/json, text/event-stream")
			if resp.StatusCode != 200 || !bytes.HasPrefix(b, []byte(`{"jsonrpc":"2.0","id":`+id+`,"result"`)) {
				t.Errorf("%s id %s: %d %.200s", method, id, resp.StatusCode, b)
			}
		}
	}
}

// TestArgumentsMustBeAnObject (issue 14 item 3): tools/call arguments that are not an
// object get -32602 for proxied tools and built-ins alike, and nothing reaches the
// upstream; absent arguments are forwarded as the client sent them.
func TestArgumentsMustBeAnObject(t *testing.T) {
	t.Parallel()
	e := newEdgeEnv(t)
	for _, args := range []string{`[]`, `"x"`, `null`, `1`, `true`} {
		for _, tool := range []string{"mcp_" + e.handle + "_echo", "agentpack_catalog_list"} {
			before := e.up.CountRequests("POST", `"tools/call"`)
			resp, b := e.post(t, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"`+tool+`","arguments":`+args+`}}`, "application/json")
			id, code := rpcError(t, b)
			if resp.StatusCode != 200 || code != -32602 || id != "3" {
				t.Errorf("%s arguments %s: %d id %s code %d", tool, args, resp.StatusCode, id, code)
			}
			if n := e.up.CountRequests("POST", `"tools/call"`) - before; n != 0 {
				t.Errorf("%s arguments %s: %d tools/call reached the upstream", tool, args, n)
			}
		}
	}
	for _, params := range []string{
		`{"name":"mcp_` + e.handle + `_echo","Name":"add","arguments":{}}`,
		`{"name":"mcp_` + e.handle + `_echo","ARGUMENTS":{"a":1},"arguments":{}}`,
	} {
		before := e.up.CountRequests("POST", `"tools/call"`)
		_, b := e.post(t, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":`+params+`}`, "application/json")
		if _, code := rpcError(t, b); code != -32602 || e.up.CountRequests("POST", `"tools/call"`) != before {
			t.Errorf("%s: code %d (want -32602, nothing upstream)", params, code)
		}
	}
	resp, b := e.post(t, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"mcp_`+e.handle+`_echo"}}`, "application/json")
	if resp.StatusCode != 200 || !bytes.Contains(b, []byte(`"result"`)) {
		t.Errorf("absent arguments: %d %s", resp.StatusCode, b)
	}
}

// TestBuiltinFormatsAreChecked: a built-in's schema that says format "uuid" refuses a
// non-UUID with VALIDATION_ERROR before the handler runs.
func TestBuiltinFormatsAreChecked(t *testing.T) {
	t.Parallel()
	e := newEdgeEnv(t)
	_, b := e.post(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"agentpack_catalog_get","arguments":{"entryId":"not-a-uuid"}}}`, "application/json")
	if !bytes.Contains(b, []byte(`VALIDATION_ERROR`)) || !bytes.Contains(b, []byte(`"isError":true`)) {
		t.Fatalf("answer %s", b)
	}
}

// TestLenientAccept (issue 14 item 2): a POST whose Accept lists only application/json,
// only text/event-stream, */* or nothing is served — as JSON, or as a one-event stream
// when text/event-stream is the only type allowed; only an Accept that allows neither
// gets 406.
func TestLenientAccept(t *testing.T) {
	t.Parallel()
	e := newEdgeEnv(t)
	call := `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"mcp_` + e.handle + `_echo","arguments":{"message":"acc"}}}`
	list := `{"jsonrpc":"2.0","id":6,"method":"ping"}`
	for _, tc := range []struct {
		accept, wantType string
		wantStatus       int
	}{
		{"application/json", "application/json", 200},
		{"text/event-stream", "text/event-stream", 200},
		{"*/*", "application/json", 200},
		{"-", "application/json", 200},
		{"application/json, text/event-stream", "application/json", 200},
		{"text/event-stream;q=1, application/json;q=0", "text/event-stream", 200},
		{"text/html", "", 406},
		{"application/json;q=0", "", 406},
	} {
		for _, body := range []string{call, list} {
			resp, b := e.post(t, body, tc.accept)
			if resp.StatusCode != tc.wantStatus {
				t.Errorf("Accept %q: status %d, want %d (%s)", tc.accept, resp.StatusCode, tc.wantStatus, b)
				continue
			}
			if tc.wantStatus != 200 {
				continue
			}
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, tc.wantType) {
				t.Errorf("Accept %q: Content-Type %q, want %s", tc.accept, ct, tc.wantType)
			}
			if tc.wantType == "text/event-stream" {
				msgs := sseMessages(t, b)
				b = []byte(msgs[len(msgs)-1])
			}
			if !bytes.Contains(b, []byte(`"result"`)) {
				t.Errorf("Accept %q: %s", tc.accept, b)
			}
		}
	}
}

// TestOversizedRequest (issue 14 item 10): a 7 MiB body gets 413 with a JSON-RPC error
// carrying the request's id, which the client reads in full (no reset while it is still
// sending); a 256 KiB body is served.
func TestOversizedRequest(t *testing.T) {
	t.Parallel()
	e := newEdgeEnv(t)
	big := `{"jsonrpc":"2.0","id":"big-1","method":"tools/call","params":{"name":"mcp_` + e.handle + `_echo","arguments":{"message":"` + strings.Repeat("x", 7<<20) + `"}}}`
	resp, b := e.post(t, big, "application/json")
	id, code := rpcError(t, b)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || id != `"big-1"` || code != -32600 {
		t.Errorf("7 MiB: %d id %s code %d", resp.StatusCode, id, code)
	}
	ok := `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"mcp_` + e.handle + `_echo","arguments":{"message":"` + strings.Repeat("y", 256<<10) + `"}}}`
	resp, b = e.post(t, ok, "application/json")
	if resp.StatusCode != 200 || !bytes.Contains(b, []byte(strings.Repeat("y", 1000))) {
		t.Errorf("256 KiB: %d %.200s", resp.StatusCode, b)
	}
}

// TestCancellation (issue 14 item 4): a client that disconnects, or that sends
// notifications/cancelled for its request, makes the gateway send notifications/cancelled
// upstream for the forwarded request and stop waiting.
func TestCancellation(t *testing.T) {
	t.Parallel()
	e := newEdgeEnv(t)
	slow := func(id string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"mcp_` + e.handle + `_slow","arguments":{"ms":60000}}}`
	}
	waitCancelled := func(t *testing.T, since int) {
		t.Helper()
		deadline := time.Now().Add(testpeer.Scaled(15 * time.Second))
		for time.Now().Before(deadline) {
			if e.up.CountRequests("POST", `"notifications/cancelled"`) > since {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatal("the upstream received no notifications/cancelled")
	}
	// waitForwarded waits until the upstream received n slow calls in all (the call is in
	// flight upstream), whatever the machine's load.
	waitForwarded := func(t *testing.T, n int) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); e.up.CountRequests("POST", `"slow"`) < n; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the slow call never reached the upstream")
			}
		}
	}
	t.Run("client disconnects", func(t *testing.T) {
		before := e.up.CountRequests("POST", `"notifications/cancelled"`)
		calls := e.up.CountRequests("POST", `"slow"`)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.env.URL+"/mcp/"+e.ws, strings.NewReader(slow("11")))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
		req.Header.Set("Authorization", "Bearer "+e.admin)
		errc := make(chan error, 1)
		go func() {
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				resp.Body.Close()
				err = fmt.Errorf("the slow call answered %d", resp.StatusCode)
			} else {
				err = nil
			}
			errc <- err
		}()
		waitForwarded(t, calls+1)
		start := time.Now()
		cancel() // the client goes away while the upstream works
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
		waitCancelled(t, before)
		// The upstream would work 60 s: the bound catches a cancellation that never came.
		if d, max := time.Since(start), testpeer.Scaled(12*time.Second); d > max {
			t.Errorf("cancellation reached the upstream %v after the client left (want at most %v)", d, max)
		}
	})
	t.Run("an ambiguous notifications/cancelled cancels nothing", func(t *testing.T) {
		// Two clients sharing a token, each with a request id 7 in flight.
		done := make(chan []byte, 2)
		calls := e.up.CountRequests("POST", `"slow"`)
		for range 2 {
			go func() {
				_, b := e.post(t, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"mcp_`+e.handle+`_slow","arguments":{"ms":3000}}}`, "application/json")
				done <- b
			}()
		}
		waitForwarded(t, calls+2) // both in flight
		e.post(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`, "application/json")
		for range 2 {
			if b := <-done; !bytes.Contains(b, []byte(`"result"`)) || bytes.Contains(b, []byte(`"isError":true`)) {
				t.Errorf("a call was cancelled by an ambiguous notification: %s", b)
			}
		}
	})
	t.Run("notifications/cancelled", func(t *testing.T) {
		before := e.up.CountRequests("POST", `"notifications/cancelled"`)
		done := make(chan []byte, 1)
		start := time.Now()
		calls := e.up.CountRequests("POST", `"slow"`)
		go func() {
			_, b := e.post(t, slow(`"slow-2"`), "application/json")
			done <- b
		}()
		waitForwarded(t, calls+1)
		resp, _ := e.post(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow-2","reason":"user"}}`, "application/json")
		if resp.StatusCode != http.StatusAccepted {
			t.Errorf("notifications/cancelled: %d, want 202", resp.StatusCode)
		}
		waitCancelled(t, before)
		select {
		case b := <-done:
			if d, max := time.Since(start), testpeer.Scaled(12*time.Second); d > max {
				t.Errorf("the cancelled call answered after %v (want at most %v): %s", d, max, b)
			}
		case <-time.After(testpeer.Scaled(18 * time.Second)):
			t.Fatal("the cancelled call kept waiting")
		}
	})
}

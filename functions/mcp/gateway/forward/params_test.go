//lint:file-ignore SA1019 tests of MCP logging and sampling, deprecated as of 2026-07-28 (SEP-2577) but defined by the revisions before, which the gateway serves.

package forward

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agentpack/gateway/functions/mcp/gateway/request"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/jsonobj"
	"github.com/agentpack/gateway/shared/upstreamauth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestUpstreamParams: only the name and the downstream exchange's _meta fields change;
// every other byte stays as the client wrote it.
func TestUpstreamParams(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{`{"name":"mcp_x_echo","arguments":{"b":1,"a":"é\u00e9"}}`, `{"name":"echo","arguments":{"b":1,"a":"é\u00e9"}}`},
		{`{"name":"mcp_x_echo","_meta":{"progressToken":7,"io.modelcontextprotocol/protocolVersion":"2026-07-28","trace":"t"}}`,
			`{"name":"echo","_meta":{"trace":"t"}}`},
		{`{"name":"mcp_x_echo","_meta":{"keep":1}}`, `{"name":"echo","_meta":{"keep":1}}`},
		// The client's per-request capabilities go upstream (MRTR), less Tasks; inputResponses
		// and requestState (an upstream's) keep their bytes.
		{`{"name":"mcp_x_echo","requestState":"up 1","inputResponses":{"k": {"action":"accept"}},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"url":{}},"sampling":{}}}}`,
			`{"name":"echo","requestState":"up 1","inputResponses":{"k": {"action":"accept"}},"_meta":{"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"url":{}},"sampling":{}}}}`},
		{`{"name":"mcp_x_echo","_meta":{"io.modelcontextprotocol/clientCapabilities":{"tasks":{"requests":{}},"roots":{},"extensions":{"io.modelcontextprotocol/tasks":{},"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}}}}`,
			`{"name":"echo","_meta":{"io.modelcontextprotocol/clientCapabilities":{"roots":{},"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}}}}`},
	}
	for _, c := range cases {
		got, err := UpstreamParams(json.RawMessage(c.in), "echo")
		if err != nil || string(got) != c.want {
			t.Errorf("UpstreamParams(%s) = %s, %v; want %s", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{`[1]`, `{"name":"x","_meta":[1]}`, `{"a":1,"a":2,"_meta":{}}`} {
		if _, err := UpstreamParams(json.RawMessage(bad), "echo"); err == nil {
			t.Errorf("UpstreamParams(%s) accepted", bad)
		}
	}
}

func TestPlainParamsAndResultIsError(t *testing.T) {
	t.Parallel()
	if got := string(PlainParams(json.RawMessage(`{"name":"n","task":{"ttl":5},"arguments":{}}`))); got != `{"name":"n","arguments":{}}` {
		t.Errorf("PlainParams = %s", got)
	}
	if got := string(PlainParams(json.RawMessage(`{"name":"task"}`))); got != `{"name":"task"}` {
		t.Errorf("PlainParams changed a params without a task member: %s", got)
	}
	for in, want := range map[string]bool{
		`{"content":[],"isError":true}`: true, `{"content":[],"isError":false}`: false,
		`{"content":[{"type":"text","text":"\"isError\":true"}]}`: false, `not json "isError"`: false,
	} {
		if got := ResultIsError(json.RawMessage(in)); got != want {
			t.Errorf("ResultIsError(%s) = %v", in, got)
		}
	}
}

// TestRelayFor: notifications are relayed only on the single-server endpoint to a client
// that accepts SSE; progress only with a progress token (relayed under the client's token);
// logs at info and above, or at 2026-07-28 from the request's log level.
func TestRelayFor(t *testing.T) {
	t.Parallel()
	single := &catalog.Connection{ID: "c"}
	if relayFor(&request.State{Single: nil, AcceptsSSE: true, Relay: &request.Relayed{}}, nil) != nil {
		t.Error("relay on the aggregate endpoint")
	}
	if relayFor(&request.State{Single: single, AcceptsSSE: false, Relay: &request.Relayed{}}, nil) != nil {
		t.Error("relay to a client that refuses SSE")
	}
	st := &request.State{Single: single, AcceptsSSE: true, Relay: &request.Relayed{}}
	r := relayFor(st, json.RawMessage(`{"progressToken":"tok"}`))
	if r == nil || r.Progress == nil || r.Log == nil {
		t.Fatalf("relay %+v", r)
	}
	r.Progress(&mcp.ProgressNotificationParams{ProgressToken: "upstream-own", Progress: 1})
	r.Log(&mcp.LoggingMessageParams{Level: "debug", Data: "dropped"})
	r.Log(&mcp.LoggingMessageParams{Level: "warning", Data: "kept"})
	ev := st.Relay.Take()
	if len(ev) != 2 || !json.Valid(ev[0]) || string(ev[0]) != `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok","progress":1}}` {
		t.Fatalf("relayed %q", ev)
	}
	newEra := &request.State{Single: single, AcceptsSSE: true, Relay: &request.Relayed{}, NewProtocol: true}
	if relayFor(newEra, nil) != nil {
		t.Error("a 2026-07-28 request without a log level gets logs")
	}
}

// TestAnswerVersion: a 2026-07-28 client gets the InputRequiredResult only when it declared
// URL-mode elicitation; older revisions get their own answer whatever _meta says.
func TestAnswerVersion(t *testing.T) {
	t.Parallel()
	caps := func(c string) json.RawMessage {
		return json.RawMessage(`{"io.modelcontextprotocol/clientCapabilities":` + c + `}`)
	}
	cases := []struct {
		name, version string
		meta          json.RawMessage
		want          string
	}{
		{"url declared", "2026-07-28", caps(`{"elicitation":{"url":{},"form":{}}}`), "2026-07-28"},
		{"form only", "2026-07-28", caps(`{"elicitation":{"form":{}}}`), ""},
		{"empty elicitation is form", "2026-07-28", caps(`{"elicitation":{}}`), ""},
		{"url null", "2026-07-28", caps(`{"elicitation":{"url":null}}`), ""},
		{"no capabilities", "2026-07-28", caps(`{}`), ""},
		{"no _meta", "2026-07-28", nil, ""},
		{"2025-11-25 ignores _meta", "2025-11-25", nil, "2025-11-25"},
		{"2025-06-18", "2025-06-18", caps(`{"elicitation":{"url":{}}}`), "2025-06-18"},
	}
	for _, c := range cases {
		if got := AnswerVersion(c.version, c.meta); got != c.want {
			t.Errorf("%s: AnswerVersion = %q, want %q", c.name, got, c.want)
		}
	}
}

// TestClientError: -32002 becomes -32602 (message and data kept) for 2026-07-28 clients
// only; other codes pass through.
func TestClientError(t *testing.T) {
	t.Parallel()
	nf := &jsonrpc.Error{Code: -32002, Message: "Resource not found", Data: json.RawMessage(`{"uri":"file:///x"}`)}
	got := ClientError("2026-07-28", nf)
	if got.Code != -32602 || got.Message != nf.Message || string(got.Data) != string(nf.Data) || nf.Code != -32002 {
		t.Errorf("2026-07-28: %+v (original %+v)", got, nf)
	}
	if got := ClientError("2025-11-25", nf); got != nf {
		t.Errorf("2025-11-25 changed: %+v", got)
	}
	other := &jsonrpc.Error{Code: -32601, Message: "m"}
	if got := ClientError("2026-07-28", other); got != other {
		t.Errorf("-32601 changed: %+v", got)
	}
}

// TestGatewayState: the gateway's own requestState is verified and removed with the
// inputResponses that answered the gateway (the upstream never sees them), every other
// byte kept; an upstream's state, or one that is not a string, passes through unopened; a
// state that fails verification is -32602.
func TestGatewayState(t *testing.T) {
	t.Parallel()
	auth := upstreamauth.New(upstreamauth.Options{Store: &upstreamauth.MemoryStore{}})
	f := New(Options{Connections: &connections.Service{Auth: auth}})
	bind := upstreamauth.Binding{Subject: "s", Workspace: "w", ConnectionID: "c", Method: "tools/call", Name: "mcp_x_t",
		Params: json.RawMessage(`{"name":"mcp_x_t","arguments":{"a": 1}}`)}
	state, err := auth.SealRequestState(t.Context(), bind)
	if err != nil {
		t.Fatal(err)
	}
	bindFor := func(raw string) upstreamauth.Binding { b := bind; b.Params = json.RawMessage(raw); return b } // as Call binds a retry
	members := func(raw string) map[string]json.RawMessage {
		m, ok := jsonobj.Members(json.RawMessage(raw))
		if !ok {
			t.Fatalf("not an object: %s", raw)
		}
		return m
	}
	retry := `{"name":"mcp_x_t","arguments":{"a": 1},"inputResponses":{"agentpack_authorize":{"action":"decline"}},"requestState":"` + state + `"}`
	out, declined, err := f.gatewayState(t.Context(), bindFor(retry), json.RawMessage(retry), members(retry))
	if err != nil || !declined || string(out) != `{"name":"mcp_x_t","arguments":{"a": 1}}` {
		t.Errorf("gateway state: %s declined=%v %v", out, declined, err)
	}
	for _, pass := range []string{
		`{"name":"mcp_x_t","arguments":{"a": 1},"inputResponses":{"k":{"action":"accept"}},"requestState":"up-1"}`,
		`{"name":"mcp_x_t","requestState":7}`,
		`{"name":"mcp_x_t"}`,
	} {
		if out, declined, err := f.gatewayState(t.Context(), bind, json.RawMessage(pass), members(pass)); err != nil || declined || string(out) != pass {
			t.Errorf("%s: %s %v %v", pass, out, declined, err)
		}
	}
	bad := `{"name":"mcp_x_t","arguments":{"a": 2},"requestState":"` + state + `"}`
	var je *jsonrpc.Error
	if _, _, err := f.gatewayState(t.Context(), bindFor(bad), json.RawMessage(bad), members(bad)); !errors.As(err, &je) || je.Code != -32602 {
		t.Errorf("a state of other arguments: %v", err)
	}
	if _, _, err := New(Options{}).gatewayState(t.Context(), bindFor(retry), json.RawMessage(retry), members(retry)); !errors.As(err, &je) || je.Code != -32602 {
		t.Errorf("a gateway state without upstream authorization: %v", err)
	}
}

// TestUpstreamElicitation: an upstream's -32042 by method and client (see
// UpstreamElicitation); TestUpstreamURLElicitationByRevision covers tools/call end to end.
func TestUpstreamElicitation(t *testing.T) {
	t.Parallel()
	je := &jsonrpc.Error{Code: -32042, Message: "URL elicitation required",
		Data: json.RawMessage(`{"elicitations":[{"mode":"url","message":"m","url":"https://u.example/x","elicitationId":"e"}]}`)}
	url := json.RawMessage(`{"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"url":{}}}}`)
	if _, _, ok := UpstreamElicitation("2025-11-25", url, "tools/call", je); ok {
		t.Error("2025-11-25 client: handled")
	}
	if _, _, ok := UpstreamElicitation("2026-07-28", url, "tools/call", &jsonrpc.Error{Code: -32603}); ok {
		t.Error("another code: handled")
	}
	res, err, ok := UpstreamElicitation("2026-07-28", url, "prompts/get", je)
	if !ok || err != nil || !bytes.Contains(res, []byte(`"resultType":"input_required"`)) || !bytes.Contains(res, []byte(`"upstream_1"`)) {
		t.Errorf("prompts/get: %s %v %v", res, err, ok)
	}
	var re *jsonrpc.Error
	for _, c := range []struct {
		method string
		meta   json.RawMessage
	}{{"completion/complete", url}, {"resources/read", nil}} {
		res, err, ok := UpstreamElicitation("2026-07-28", c.meta, c.method, je)
		if !ok || res != nil || !errors.As(err, &re) || re.Code != -32600 || !strings.Contains(re.Message, "https://u.example/x") {
			t.Errorf("%s: %s %v %v", c.method, res, err, ok)
		}
	}
	// No usable elicitation in the data: the text of the error.
	res, err, ok = UpstreamElicitation("2026-07-28", url, "tools/call", &jsonrpc.Error{Code: -32042, Message: "go elsewhere"})
	if !ok || err != nil || !bytes.Contains(res, []byte(`"isError":true`)) || !bytes.Contains(res, []byte("go elsewhere")) {
		t.Errorf("no elicitations: %s %v %v", res, err, ok)
	}
}

package message

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

func TestRead(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		body     string
		wantReq  *Request
		wantCode int    // a refusal's code; 0 = none
		wantID   string // the refusal's id; "" = null
	}{
		{"empty body: go-sdk's", "  ", nil, 0, ""},
		{"empty batch", "[]", nil, jsonrpc.CodeInvalidRequest, ""},
		{"a batch: go-sdk's", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, nil, 0, ""},
		{"not JSON: go-sdk's", `{"jsonrpc":`, nil, 0, ""},
		{"invalid UTF-8: go-sdk's", "{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"ping\"}", nil, 0, ""},
		{"a notification: go-sdk's", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil, 0, ""},
		{"jsonrpc 1.0: go-sdk's", `{"jsonrpc":"1.0","id":1,"method":"ping"}`, nil, 0, ""},
		{"id true", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, nil, jsonrpc.CodeInvalidRequest, ""},
		{"id null", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, nil, jsonrpc.CodeInvalidRequest, ""},
		{"id 1.5", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, nil, jsonrpc.CodeInvalidRequest, ""},
		{"a request, id as sent", `{"jsonrpc":"2.0","id":123456789012345678901,"method":"tools/list","params":{"cursor":"page-1"}}`,
			&Request{ID: []byte(`123456789012345678901`), Method: "tools/list", Params: []byte(`{"cursor":"page-1"}`)}, 0, ""},
		{"tools/call arguments not an object", `{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"x","arguments":[1]}}`,
			nil, jsonrpc.CodeInvalidParams, `"a"`},
		{"tools/call with a member differing only in case", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","Arguments":{}}}`,
			nil, jsonrpc.CodeInvalidParams, `7`},
		{"tools/call params not an object: go-sdk's", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":[]}`, nil, 0, ""},
		{"tools/call", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x"}}`,
			&Request{ID: []byte(`7`), Method: "tools/call", Params: []byte(`{"name":"x"}`), Call: map[string]json.RawMessage{"name": json.RawMessage(`"x"`)}}, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req, ref := Read([]byte(tt.body))
			if tt.wantCode != 0 {
				if ref == nil || ref.Code != tt.wantCode || string(ref.ID) != tt.wantID || req != nil {
					t.Fatalf("Read = %+v, %+v; want refusal %d with id %q", req, ref, tt.wantCode, tt.wantID)
				}
				return
			}
			if ref != nil {
				t.Fatalf("Read refused: %+v", ref)
			}
			got := req
			if tt.wantReq == nil {
				if got != nil {
					t.Fatalf("Read = %+v, want nil (go-sdk serves the body)", got)
				}
				return
			}
			if got == nil {
				t.Fatal("Read = nil, want a request")
			}
			if string(got.ID) != string(tt.wantReq.ID) || got.Method != tt.wantReq.Method || string(got.Params) != string(tt.wantReq.Params) || len(got.Call) != len(tt.wantReq.Call) {
				t.Errorf("Read = %+v, want %+v", got, tt.wantReq)
			}
		})
	}
}

func TestValidID(t *testing.T) {
	t.Parallel()
	for id, want := range map[string]bool{
		`1`: true, `-1`: true, `0`: true, `"x"`: true, `""`: true, `123456789012345678901234567890`: true,
		``: false, `-`: false, `01`: false, `1.0`: false, `1e3`: false, `null`: false, `true`: false, `{}`: false, `[1]`: false, `"x`: false,
	} {
		if got := ValidID([]byte(id)); got != want {
			t.Errorf("ValidID(%s) = %v, want %v", id, got, want)
		}
	}
}

func TestRequestAndResponseID(t *testing.T) {
	t.Parallel()
	big := `{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"x":"` + strings.Repeat("a", 8000) + `"}}`
	if got := string(RequestID([]byte(big))); got != `"big"` {
		t.Errorf("RequestID of an oversized body = %s, want \"big\"", got)
	}
	late := `{"jsonrpc":"2.0","params":{"x":"` + strings.Repeat("a", 8000) + `"},"id":1}`
	if got := RequestID([]byte(late)); got != nil {
		t.Errorf("RequestID with the id after params = %s, want nil (not scanned)", got)
	}
	if got := RequestID([]byte(`{"id":1.5,"method":"x"}`)); got != nil {
		t.Errorf("RequestID of an invalid id = %s, want nil", got)
	}
	if got := string(ResponseID([]byte(`{"jsonrpc":"2.0","id":42,"result":{`))); got != "42" {
		t.Errorf("ResponseID of a truncated answer = %s, want 42", got)
	}
	for _, head := range []string{`[1]`, `{"result":{},"id":1}`, `not json`} {
		if got := ResponseID([]byte(head)); got != nil {
			t.Errorf("ResponseID(%s) = %s, want nil", head, got)
		}
	}
}

func TestCancelledID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body, want string
		ok               bool
	}{
		{"cancels", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"r1","reason":"x"}}`, `"r1"`, true},
		{"a request, not a notification", `{"jsonrpc":"2.0","id":1,"method":"notifications/cancelled","params":{"requestId":1}}`, "", false},
		{"an invalid requestId", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1.5}}`, "", false},
		{"no params", `{"jsonrpc":"2.0","method":"notifications/cancelled"}`, "", false},
		{"another method naming it", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"notifications/cancelled"}}`, "", false},
	}
	for _, tt := range tests {
		id, ok := CancelledID([]byte(tt.body))
		if ok != tt.ok || string(id) != tt.want {
			t.Errorf("%s: CancelledID = %s, %v; want %s, %v", tt.name, id, ok, tt.want, tt.ok)
		}
	}
}

func TestCallByName(t *testing.T) {
	t.Parallel()
	const call = "agentpack_tool_call"
	direct, target, ok := CallByName([]byte(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"agentpack_tool_call","arguments":{"name":"mcp_a_b","arguments":{"q":1}},"_meta":{"k":1}}}`), call)
	if !ok || target != "mcp_a_b" {
		t.Fatalf("CallByName = %s, %q, %v; want the direct call of mcp_a_b", direct, target, ok)
	}
	req, ref := Read(direct)
	if ref != nil || req == nil || string(req.Call["name"]) != `"mcp_a_b"` || string(req.Call["arguments"]) != `{"q":1}` || string(req.Call["_meta"]) != `{"k":1}` || string(req.ID) != "3" {
		t.Errorf("direct call = %s", direct)
	}
	if direct, _, ok := CallByName([]byte(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"agentpack_tool_call","arguments":{"name":"t"}}}`), call); !ok || !strings.Contains(string(direct), `"arguments":{}`) {
		t.Errorf("absent arguments: %s, %v; want {}", direct, ok)
	}
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"mcp_a_b","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"name":"agentpack_tool_call"}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"agentpack_tool_call","arguments":{"name":"t","extra":1}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"agentpack_tool_call","arguments":{"name":"agentpack_tool_call"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"agentpack_tool_call","arguments":{"name":"t","arguments":[1]}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"agentpack_tool_call","arguments":{"name":""}}}`,
	} {
		if _, _, ok := CallByName([]byte(body), call); ok {
			t.Errorf("CallByName rewrote %s", body)
		}
	}
}

func TestNewEraResult(t *testing.T) {
	t.Parallel()
	tests := []struct{ method, in, want string }{
		{"tools/call", `{"content":[]}`, `{"content":[],"resultType":"complete"}`},
		{"tools/list", `{"tools":[],"cacheScope":"public"}`, `{"tools":[],"cacheScope":"private","resultType":"complete","ttlMs":0}`},
		{"resources/read", `{"contents":[],"resultType":"complete","ttlMs":5}`, `{"contents":[],"resultType":"complete","ttlMs":5,"cacheScope":"private"}`},
		{"ping", `[1]`, `[1]`},
	}
	for _, tt := range tests {
		var got, want any
		if err := json.Unmarshal(NewEraResult(tt.method, []byte(tt.in)), &got); err != nil {
			t.Fatalf("%s: %v", tt.method, err)
		}
		_ = json.Unmarshal([]byte(tt.want), &want)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("NewEraResult(%s, %s) (-want +got):\n%s", tt.method, tt.in, diff)
		}
	}
}

func TestVersionServedAndHeadersMatch(t *testing.T) {
	t.Parallel()
	req := func(params string) *Request {
		return &Request{ID: []byte(`1`), Method: "tools/call", Params: []byte(params)}
	}
	r := httptest.NewRequest("POST", "/mcp", nil)
	if !VersionServed(r, req(`{"name":"x"}`)) {
		t.Error("no header, no _meta: not served")
	}
	r.Header.Set("Mcp-Protocol-Version", "1999-01-01")
	if VersionServed(r, req(`{"name":"x"}`)) {
		t.Error("an unknown version served")
	}
	r.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	if VersionServed(r, req(`{"name":"x","_meta":{"io.modelcontextprotocol/protocolVersion":"2025-06-18"}}`)) {
		t.Error("header and _meta differ: served")
	}
	if VersionServed(r, req(`{"_meta":{"io.modelcontextprotocol/protocolVersion":`)) {
		t.Error("params that do not decode: served")
	}
	h := httptest.NewRequest("POST", "/mcp", nil)
	h.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	h.Header.Set("Mcp-Method", "tools/call")
	h.Header.Set("Mcp-Name", "=?base64?bWNwX2FfYg==?=") // mcp_a_b
	body := req(`{"name":"mcp_a_b","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`)
	if !HeadersMatch(h, body) || h.Header.Get("Mcp-Name") != "mcp_a_b" {
		t.Errorf("an encoded Mcp-Name that matches: %v, header now %q", HeadersMatch(h, body), h.Header.Get("Mcp-Name"))
	}
	h.Header.Set("Mcp-Name", "other")
	if HeadersMatch(h, body) {
		t.Error("an Mcp-Name that differs from the body matched")
	}
	h.Header.Set("Mcp-Name", "mcp_a_b")
	h.Header.Set("Mcp-Method", "tools/list")
	if HeadersMatch(h, body) {
		t.Error("an Mcp-Method that differs from the body matched")
	}
}

package mcpclient

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/agentpack/gateway/shared/testpeer"
	"github.com/google/go-cmp/cmp"
)

// TestHeaderValueEncoding: the encoding examples of the 2026-07-28 transport chapter
// ("Value Encoding"), both ways, and what does not decode.
func TestHeaderValueEncoding(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ value, encoded string }{
		{"us-west1", "us-west1"},
		{"Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="},
		{" padded ", "=?base64?IHBhZGRlZCA=?="},
		{"line1\nline2", "=?base64?bGluZTEKbGluZTI=?="},
		{"=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="},
		{"", ""},
		{"a b", "a b"},
	} {
		if got := EncodeHeaderValue(tc.value); got != tc.encoded {
			t.Errorf("EncodeHeaderValue(%q) = %q, want %q", tc.value, got, tc.encoded)
		}
		if got, ok := DecodeHeaderValue(tc.encoded); !ok || got != tc.value {
			t.Errorf("DecodeHeaderValue(%q) = %q, %v, want %q", tc.encoded, got, ok, tc.value)
		}
	}
	// Invalid Base64; not UTF-8; raw (not encoded) non-ASCII and control bytes, which the
	// revision requires to be sent Base64-encoded (issue 34).
	for _, bad := range []string{"=?base64?not base64!?=", "=?base64?/w==?=", "caf\u00e9", "\u6587\u66f8", "a\x7fb", "tab\there"} {
		if _, ok := DecodeHeaderValue(bad); ok {
			t.Errorf("DecodeHeaderValue(%q) accepted", bad)
		}
	}
	// Markers are case-sensitive: anything else is a plain value.
	for _, plain := range []string{"=?BASE64?SGk=?=", "=?base64?SGk=", "?="} {
		if got, ok := DecodeHeaderValue(plain); !ok || got != plain {
			t.Errorf("DecodeHeaderValue(%q) = %q, %v", plain, got, ok)
		}
	}
}

// TestParamHeaders: x-mcp-header bindings are read through "properties" only (not items,
// not with a name that is no token, the first of two names equal but for case), and
// mirrored as the transport chapter says: strings as they are or Base64, integers in
// decimal, booleans lowercase, absent and null omitted, non-primitives and fractions
// skipped.
func TestParamHeaders(t *testing.T) {
	t.Parallel()
	schema := json.RawMessage(`{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region"},
		"count":{"type":"integer","x-mcp-header":"Count"},
		"dry":{"type":"boolean","x-mcp-header":"Dry"},
		"where":{"type":"object","properties":{"city":{"type":"string","x-mcp-header":"City"}}},
		"list":{"type":"array","items":{"type":"object","properties":{"x":{"type":"string","x-mcp-header":"X"}}}},
		"bad":{"type":"string","x-mcp-header":"Bad Name"},
		"dup":{"type":"string","x-mcp-header":"region"},
		"obj":{"type":"object","x-mcp-header":"Obj"}}}`)
	var got []string
	for _, b := range HeaderBindings(schema) {
		got = append(got, strings.Join(b.Path, ".")+"="+b.Header)
	}
	// "dup" sorts before "region": the first of the two case-equal names is dup's.
	want := []string{"count=Count", "dry=Dry", "dup=region", "obj=Obj", "where.city=City"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("bindings (-want +got):\n%s", diff)
	}
	hdr := ParamHeaders(schema, json.RawMessage(`{"region":"eu","count":42.0,"dry":false,"where":{"city":"Zürich"},"obj":{"a":1},"list":[{"x":"no"}]}`))
	wantHdr := map[string]string{"Mcp-Param-Count": "42", "Mcp-Param-Dry": "false", "Mcp-Param-City": "=?base64?WsO8cmljaA==?="}
	if diff := cmp.Diff(wantHdr, hdr); diff != "" {
		t.Errorf("headers (-want +got):\n%s", diff)
	}
	if h := ParamHeaders(schema, json.RawMessage(`{"count":1.5,"dry":null}`)); h != nil {
		t.Errorf("fraction and null mirrored: %v", h)
	}
	if h := ParamHeaders(json.RawMessage(`{"type":"object"}`), json.RawMessage(`{"a":1}`)); h != nil {
		t.Errorf("schema without bindings: %v", h)
	}
}

// TestCheckParamHeaders: the server-side check of a tools/call's Mcp-Param-* headers.
func TestCheckParamHeaders(t *testing.T) {
	t.Parallel()
	schema := json.RawMessage(testpeer.HeaderToolSchema)
	args := json.RawMessage(`{"region":"Zürich","count":7,"dry":true,"where":{"city":"Bern"}}`)
	ok := http.Header{}
	ok.Set("Mcp-Param-Region", "=?base64?WsO8cmljaA==?=")
	ok.Set("Mcp-Param-Count", "7.0") // compared numerically
	ok.Set("Mcp-Param-Dry", "true")
	ok.Set("mcp-param-city", "Bern") // header names are case-insensitive
	if err := CheckParamHeaders(ok, schema, args); err != nil {
		t.Errorf("matching headers refused: %v", err)
	}
	for _, tc := range []struct {
		name string
		edit func(h http.Header)
		args string
	}{
		{name: "missing", edit: func(h http.Header) { h.Del("Mcp-Param-Dry") }},
		{name: "undecoded compared", edit: func(h http.Header) { h.Set("Mcp-Param-Region", "Zürich?") }},
		{name: "different", edit: func(h http.Header) { h.Set("Mcp-Param-Count", "8") }},
		{name: "invalid base64", edit: func(h http.Header) { h.Set("Mcp-Param-City", "=?base64?***?=") }},
		{name: "header for an absent parameter", args: `{"region":"Zürich","count":7,"dry":true}`},
		{name: "two values", edit: func(h http.Header) { h.Add("Mcp-Param-Dry", "true") }},
	} {
		h := ok.Clone()
		if tc.edit != nil {
			tc.edit(h)
		}
		a := args
		if tc.args != "" {
			a = json.RawMessage(tc.args)
		}
		err := CheckParamHeaders(h, schema, a)
		if err == nil {
			t.Errorf("%s: accepted", tc.name)
		} else if strings.Contains(err.Error(), "Zürich") || strings.Contains(err.Error(), "Bern") {
			t.Errorf("%s: the error quotes a value: %v", tc.name, err)
		}
	}
}

// TestForwardMirrorsParamHeaders (issue 22, x-mcp-header): a tools/call forwarded to a
// 2026-07-28 upstream carries the tool's x-mcp-header parameters as Mcp-Param-* headers,
// Base64 where the value needs it, and an Mcp-Name in the Base64 form for a non-ASCII
// tool name; go-sdk's server, which refuses a call whose headers do not match, serves it.
func TestForwardMirrorsParamHeaders(t *testing.T) {
	t.Parallel()
	up := testpeer.NewHeaderUpstream(t)
	p := newPool(t, nil)
	tg := Target{ConnectionID: "h", URL: up.URL}
	ctx := WithInputSchema(t.Context(), json.RawMessage(testpeer.HeaderToolSchema))
	for _, tool := range []string{testpeer.HeaderToolASCII, testpeer.HeaderToolUnicode} {
		params := `{"name":` + strings.TrimSpace(mustJSON(t, tool)) + `,"arguments":{"region":"us-west1","count":3,"dry":false,"where":{"city":"Zürich"},"query":"q"}}`
		res, err := p.Forward(ctx, tg, "tools/call", json.RawMessage(params), nil)
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		if !strings.Contains(string(res), "ok "+tool) || strings.Contains(string(res), `"isError":true`) {
			t.Errorf("%s: %s", tool, res)
		}
		calls := up.Calls()
		h := calls[len(calls)-1]
		want := map[string]string{"Mcp-Param-Region": "us-west1", "Mcp-Param-Count": "3", "Mcp-Param-Dry": "false",
			"Mcp-Param-City": "=?base64?WsO8cmljaA==?="}
		if diff := cmp.Diff(want, testpeer.ParamHeaders(h)); diff != "" {
			t.Errorf("%s: Mcp-Param headers (-want +got):\n%s", tool, diff)
		}
		if got := h.Get("Mcp-Name"); got != EncodeHeaderValue(tool) {
			t.Errorf("%s: Mcp-Name %q", tool, got)
		}
	}
	if h := up.Calls()[1].Get("Mcp-Name"); !strings.HasPrefix(h, "=?base64?") {
		t.Errorf("non-ASCII name sent as %q", h)
	}
	// Without the schema the headers are missing, and go-sdk's server refuses the call.
	_, err := p.Forward(t.Context(), tg, "tools/call", json.RawMessage(`{"name":"`+testpeer.HeaderToolASCII+`","arguments":{"region":"us-west1"}}`), nil)
	if rpc := RPCError(err); rpc == nil || rpc.Code != -32020 {
		t.Errorf("call without Mcp-Param-Region: %v, want the upstream's -32020", err)
	}
}

func mustJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// numberHeaderTool is an upstream tool whose parameters carry x-mcp-header on every type:
// allowed on string, integer and boolean (also with null beside them), forbidden on number,
// object and array (MCP 2026-07-28 "Custom Headers from Tool Parameters", SEP-2243). Its
// spacing is the upstream's own, to see that every other byte is kept.
const numberHeaderTool = `{"name":"pay", "title":"Pay","inputSchema":{"type":"object",  "properties":{` +
	`"amount":{"type":"number","x-mcp-header":"Amount","minimum":0},` +
	`"region":{"type":"string", "x-mcp-header":"Region"},` +
	`"count":{"x-mcp-header":"Count","type":"integer"},` +
	`"dry":{"type":"boolean","x-mcp-header":"Dry"},` +
	`"note":{"type":["string","null"],"x-mcp-header":"Note"},` +
	`"tags":{"type":"array","items":{"type":"string"},"x-mcp-header":"Tags"},` +
	`"where":{"type":"object","x-mcp-header":"Where","properties":{"lat":{"x-mcp-header":"Lat", "type":["number","null"]},"city":{"type":"string","x-mcp-header":"City"}}}},` +
	`"required":["amount"]},"annotations":{"readOnlyHint":false},"_meta":{"k":[1, 2]}}`

// TestNumberHeaderAnnotationDropped: ListTools against a loopback upstream removes the
// x-mcp-header annotations on number, object and array parameters from a tool's definition
// (so neither the gateway's clients nor its upstream hop mirror them) and keeps the tool,
// its string, integer and boolean annotations, and every other byte of the definition as the
// upstream sent it; a tool without a forbidden annotation is byte-for-byte the upstream's.
// The change is reported in Info.Normalized (the connection's schema notes).
func TestNumberHeaderAnnotationDropped(t *testing.T) {
	t.Parallel()
	up := testpeer.NewRawUpstream(t, false)
	plain := `{"name":"forecast","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"n":{"type":"integer","x-mcp-header":"N"}}}}`
	up.ToolsList = `{"tools":[` + numberHeaderTool + `, ` + plain + `]}`
	p := newPool(t, nil)
	tools, info, err := p.ListTools(t.Context(), Target{ConnectionID: "hdr", URL: up.URL})
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 2 {
		t.Fatalf("listed %d tools, want both", len(tools))
	}
	want := numberHeaderTool
	for _, ann := range []string{`,"x-mcp-header":"Amount"`, `,"x-mcp-header":"Tags"`, `,"x-mcp-header":"Where"`, `"x-mcp-header":"Lat",`} {
		if !strings.Contains(want, ann) {
			t.Fatalf("fixture lacks %s", ann)
		}
		want = strings.Replace(want, ann, "", 1)
	}
	if got := string(tools[0].Definition); got != want {
		t.Errorf("definition:\n got %s\nwant %s", got, want)
	}
	if got := string(tools[1].Definition); got != plain {
		t.Errorf("a tool without forbidden annotations changed:\n got %s\nwant %s", got, plain)
	}
	var headers []string
	for _, b := range HeaderBindings(tools[0].InputSchema) {
		headers = append(headers, b.Header)
	}
	if diff := cmp.Diff([]string{"Count", "Dry", "Note", "Region", "City"}, headers); diff != "" {
		t.Errorf("bindings left (-want +got):\n%s", diff)
	}
	// The gateway's upstream hop sends no header for the dropped ones.
	h := ParamHeaders(tools[0].InputSchema, json.RawMessage(`{"amount":5,"region":"eu","where":{"lat":1,"city":"Oslo"},"tags":["a"]}`))
	if diff := cmp.Diff(map[string]string{"Mcp-Param-Region": "eu", "Mcp-Param-City": "Oslo"}, h); diff != "" {
		t.Errorf("headers (-want +got):\n%s", diff)
	}
	if len(info.Normalized) != 1 || info.Normalized[0].Name != "pay" ||
		info.Normalized[0].Reason != `x-mcp-header removed from "amount" (number), "tags" (array), "where" (object), "where.lat" (number): MCP 2026-07-28 allows it on string, integer and boolean parameters only` {
		t.Errorf("normalized = %+v", info.Normalized)
	}
}

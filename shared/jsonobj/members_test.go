package jsonobj

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"testing"
)

// membersDecoder is the json.Decoder token-stream split Members used before scanObject:
// the reference the differential test and fuzz target hold Members to.
func membersDecoder(raw []byte) (map[string]json.RawMessage, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	m := map[string]json.RawMessage{}
	for dec.More() {
		k, err := dec.Token()
		key, isStr := k.(string)
		if err != nil || !isStr {
			return nil, false
		}
		if _, dup := m[key]; dup {
			return nil, false
		}
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return nil, false
		}
		m[key] = v
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false
	}
	return m, true
}

var membersCases = []string{
	`{}`, ` { } `, `{"a":1}`, `{"a":1,"a":2}`, `{"a" : "x\"}" , "b":[1,{"c":"]"}],"d":null}`,
	`{"\u006eame":"x","name":"y"}`, `{"na\u00e9":true}`, `{"a":{"b":{"c":[[],{}]}}}`, `{"a":1}x`, `{"a":1}{}`,
	`[1]`, `"s"`, `{"a":}`, `{"a":1,}`, `{a:1}`, ``, `  `, `{"a":-1.5e3,"b":false,"c":"\\"}`, "{\"k\xff\":1}",
	`{"a":"\ud800"}`, "\t{\"a\":\n1\r}\n", `{"":0}`, `{"a":1 , "b" : 2}`,
}

// TestMembersMatchesDecoder: Members splits every case exactly as the token-stream decoder
// does (same keys, same value bytes, same refusals), and its values do not alias the input.
func TestMembersMatchesDecoder(t *testing.T) {
	for _, c := range membersCases {
		checkMembers(t, []byte(c))
	}
	raw := []byte(`{"a":"xy"}`)
	m, _ := Members(raw)
	raw[6] = 'Z'
	if string(m["a"]) != `"xy"` {
		t.Errorf("the value aliases the input: %s", m["a"])
	}
	if s, e, found, err := memberSpan(json.RawMessage(`{"a":1, "b" : [2] }`), "b"); err != nil || !found || s != 14 || e != 17 {
		t.Errorf("memberSpan b = %d, %d, %v, %v; want 14, 17", s, e, found, err)
	}
	if _, _, _, err := memberSpan(json.RawMessage(`{"b":1,"b":2}`), "b"); err == nil {
		t.Error("memberSpan accepted a duplicate key")
	}
	if _, _, found, err := memberSpan(json.RawMessage(`{"b":1}`), "c"); err != nil || found {
		t.Errorf("memberSpan of an absent key: %v %v", found, err)
	}
	if _, _, _, err := memberSpan(json.RawMessage(`[1]`), "c"); err == nil {
		t.Error("memberSpan accepted an array")
	}
}

func checkMembers(t *testing.T, raw []byte) {
	t.Helper()
	want, wok := membersDecoder(raw)
	got, gok := Members(raw)
	if gok != wok || !maps.EqualFunc(got, want, func(a, b json.RawMessage) bool { return bytes.Equal(a, b) }) {
		t.Errorf("Members(%q) = %q, %v; the decoder gives %q, %v", raw, got, gok, want, wok)
	}
}

func FuzzMembers(f *testing.F) {
	for _, c := range membersCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, raw []byte) { checkMembers(t, raw) })
}

// BenchmarkMembers: a proxied tools/call request and its params, split as the edge does on
// every call, by Members and by the token-stream decoder it replaced.
func BenchmarkMembers(b *testing.B) {
	req := []byte(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"mcp_abc123_echo","arguments":{"message":"hello"},"_meta":{"progressToken":7}}}`)
	for _, impl := range []struct {
		name string
		fn   func([]byte) (map[string]json.RawMessage, bool)
	}{{"scan", Members}, {"decoder", membersDecoder}} {
		b.Run(impl.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				m, ok := impl.fn(req)
				if !ok {
					b.Fatal("not split")
				}
				if _, ok := impl.fn(m["params"]); !ok {
					b.Fatal("params not split")
				}
			}
		})
	}
}

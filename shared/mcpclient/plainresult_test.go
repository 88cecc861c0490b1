package mcpclient

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestPlainResultAgreesWithDecodeMessage: for every body, takeResponse answers what go-sdk's
// decoder alone answers (the result bytes or an error), and plainResult takes only plain
// success responses to the request's id, returning the result byte for byte.
func TestPlainResultAgreesWithDecodeMessage(t *testing.T) {
	jid := forwardJID(1000000000007)
	slow := func(b []byte) (json.RawMessage, error) { return decodeSlow(b, jid) }
	cases := []struct {
		body string
		fast bool // plainResult takes it
	}{
		{`{"jsonrpc":"2.0","id":1000000000007,"result":{"content":[{"type":"text","text":"Echo: <a&b> \u00e9"}]}}`, true},
		{"{ \"result\" : {\"a\" : [1, 2.50, \"x\"] } ,\n \"id\":1000000000007, \"jsonrpc\":\"2.0\" }\n", true},
		{`{"jsonrpc":"2.0","id":1000000000007,"result":[]}`, true},
		{`{"jsonrpc":"2.0","id":1000000000007,"result":null}`, false},
		{`{"jsonrpc":"2.0","id":1000000000007,"error":{"code":-32602,"message":"bad"}}`, false},
		{`{"jsonrpc":"2.0","id":1000000000007,"result":{},"error":{"code":-32602,"message":"bad"}}`, false},
		{`{"jsonrpc":"2.0","id":1000000000008,"result":{}}`, false},
		{`{"jsonrpc":"2.0","id":"1000000000007","result":{}}`, false},
		{`{"jsonrpc":"2.0","id":1000000000007.0,"result":{}}`, false},
		{`{"jsonrpc":"1.0","id":1000000000007,"result":{}}`, false},
		{`{"jsonrpc":"2.0","id":1000000000007,"result":{"a":1},"result":{"a":2}}`, false},
		{`{"jsonrpc":"2.0","id":1000000000007,"Result":{}}`, false},
		{`{"jsonrpc":"2.0","id":1000000000007,"result":{}} {}`, false},
		{`{"jsonrpc":"2.0","id":1000000000007,"result":{}`, false},
		{`{"jsonrpc":"2.0","method":"notifications/message","params":{}}`, false},
		{`[]`, false},
		{`{}`, false},
		{`{"jsonrpc":"2.0","id":1000000000007,"res\u0075lt":{}}`, false},
		{`{"jsonrpc":"2.0","id":1000000000007,"result":{"s":"a \"}\" ] [{","t":[{"u":"\\"}],"n":-1.5e3,"b":true,"z":null}}`, true},
		{`{"jsonrpc":"2.0","id":1000000000007,"result":5}`, true},
		{`{"jsonrpc":"2.0","id":1000000000007,"result":"x"}`, true},
		{`{"jsonrpc":"2.0","id":1000000000007,"result":` + strings.Repeat("[", 999) + strings.Repeat("]", 999) + `}`, false},
		{`{"jsonrpc":"2.0","id":1000000000007,"result":` + strings.Repeat("[", 997) + strings.Repeat("]", 997) + `}`, true},
	}
	for _, c := range cases {
		b := []byte(c.body)
		res, ok := plainResult(b, jid)
		if ok != c.fast {
			t.Errorf("plainResult(%s): ok %v, want %v", c.body, ok, c.fast)
		}
		want, wantErr := slow(b)
		if ok && (wantErr != nil || !bytes.Equal(res, want)) {
			t.Errorf("plainResult(%s) = %s, go-sdk's decoder: %s, %v", c.body, res, want, wantErr)
		}
		got, gotErr := takeResponse(b, jid)
		if (gotErr == nil) != (wantErr == nil) || !bytes.Equal(got, want) {
			t.Errorf("takeResponse(%s) = %s, %v; go-sdk's decoder: %s, %v", c.body, got, gotErr, want, wantErr)
		}
	}
	sid, _ := jsonrpc.MakeID("a")
	if _, ok := plainResult([]byte(`{"jsonrpc":"2.0","id":"a","result":{}}`), sid); ok {
		t.Error("plainResult took a string id (the pool only sends integers)")
	}
}

// decodeSlow is takeResponse before plainResult: go-sdk's decoder alone.
func decodeSlow(b []byte, jid jsonrpc.ID) (json.RawMessage, error) {
	msg, err := jsonrpc.DecodeMessage(b)
	if err != nil {
		return nil, err
	}
	r, ok := msg.(*jsonrpc.Response)
	if !ok || r.ID != jid {
		return nil, errNotOurs
	}
	return resultOf(r)
}

// FuzzPlainResult: whatever the body, a result plainResult takes is the one go-sdk's
// decoder reads, byte for byte.
func FuzzPlainResult(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":7,"result":{"a":[1,"}"]}}`, `{"id":7,"jsonrpc":"2.0","result":"x" }`,
		`{"jsonrpc":"2.0","id":7,"result":{},"id":7}`, ` {"jsonrpc":"2.0","id":7,"result":[{"b":"\\\""}]}`} {
		f.Add([]byte(s))
	}
	jid := forwardJID(7)
	f.Fuzz(func(t *testing.T, b []byte) {
		res, ok := plainResult(b, jid)
		if !ok {
			return
		}
		want, err := decodeSlow(b, jid)
		if err != nil || !bytes.Equal(res, want) {
			t.Fatalf("plainResult(%q) = %s; go-sdk's decoder: %s, %v", b, res, want, err)
		}
	})
}

var errNotOurs = errors.New("not the response to the request")

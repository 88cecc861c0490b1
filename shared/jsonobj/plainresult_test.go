package jsonobj_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agentpack/gateway/shared/jsonobj"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// The oracle is go-sdk's JSON-RPC decoder, which the upstream client falls back to: the
// test imports it, the package does not (it stays a leaf).

// TestPlainResultAgreesWithDecodeMessage: PlainResult takes only plain success responses
// to the request's id, and what it takes is the result go-sdk's decoder reads, byte for
// byte.
func TestPlainResultAgreesWithDecodeMessage(t *testing.T) {
	const id = 1000000000007
	cases := []struct {
		body string
		fast bool // PlainResult takes it
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
		res, ok := jsonobj.PlainResult(b, id)
		if ok != c.fast {
			t.Errorf("PlainResult(%s): ok %v, want %v", c.body, ok, c.fast)
		}
		want, wantErr := decodeSDK(b, id)
		if ok && (wantErr != nil || !bytes.Equal(res, want)) {
			t.Errorf("PlainResult(%s) = %s, go-sdk's decoder: %s, %v", c.body, res, want, wantErr)
		}
	}
}

// decodeSDK is go-sdk's reading of b as the response to request id.
func decodeSDK(b []byte, id int64) (json.RawMessage, error) {
	jid, err := jsonrpc.MakeID(float64(id))
	if err != nil {
		return nil, err
	}
	msg, err := jsonrpc.DecodeMessage(b)
	if err != nil {
		return nil, err
	}
	r, ok := msg.(*jsonrpc.Response)
	if !ok || r.ID != jid {
		return nil, errNotOurs
	}
	if r.Error != nil {
		return nil, r.Error
	}
	if len(r.Result) == 0 {
		return nil, errors.New("neither result nor error")
	}
	return r.Result, nil
}

var errNotOurs = errors.New("not the response to the request")

// FuzzPlainResult: whatever the body, a result PlainResult takes is the one go-sdk's
// decoder reads, byte for byte.
func FuzzPlainResult(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":7,"result":{"a":[1,"}"]}}`, `{"id":7,"jsonrpc":"2.0","result":"x" }`,
		`{"jsonrpc":"2.0","id":7,"result":{},"id":7}`, ` {"jsonrpc":"2.0","id":7,"result":[{"b":"\\\""}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		res, ok := jsonobj.PlainResult(b, 7)
		if !ok {
			return
		}
		want, err := decodeSDK(b, 7)
		if err != nil || !bytes.Equal(res, want) {
			t.Fatalf("PlainResult(%q) = %s; go-sdk's decoder: %s, %v", b, res, want, err)
		}
	})
}

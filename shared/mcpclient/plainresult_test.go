package mcpclient

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestTakeResponseAgreesWithDecodeMessage: takeResponse answers what go-sdk's decoder
// alone answers (the result bytes or an error), on the plain answers jsonobj.PlainResult
// takes and on those it hands to the decoder (its own agreement is tested in jsonobj).
func TestTakeResponseAgreesWithDecodeMessage(t *testing.T) {
	jid := forwardJID(1000000000007)
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1000000000007,"result":{"content":[{"type":"text","text":"Echo: <a&b>"}]}}`,
		`{"jsonrpc":"2.0","id":1000000000007,"result":null}`,
		`{"jsonrpc":"2.0","id":1000000000007,"error":{"code":-32602,"message":"bad"}}`,
		`{"jsonrpc":"2.0","id":1000000000008,"result":{}}`,
		`{"jsonrpc":"2.0","id":1000000000007,"result":{"a":1},"result":{"a":2}}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{}}`,
		`{"jsonrpc":"2.0","id":1000000000007,"result":{}`,
	} {
		b := []byte(body)
		want, wantErr := decodeSlow(b, jid)
		got, gotErr := takeResponse(b, jid)
		if (gotErr == nil) != (wantErr == nil) || !bytes.Equal(got, want) {
			t.Errorf("takeResponse(%s) = %s, %v; go-sdk's decoder: %s, %v", body, got, gotErr, want, wantErr)
		}
	}
	// A string id (the pool only sends integers) skips the plain scan and still decodes.
	sid, _ := jsonrpc.MakeID("a")
	if got, err := takeResponse([]byte(`{"jsonrpc":"2.0","id":"a","result":{}}`), sid); err != nil || string(got) != `{}` {
		t.Errorf("takeResponse with a string id = %s, %v", got, err)
	}
}

// decodeSlow is takeResponse without jsonobj.PlainResult: go-sdk's decoder alone.
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

var errNotOurs = errors.New("not the response to the request")

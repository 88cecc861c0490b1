package builtin

import (
	"encoding/json"
	"testing"
)

// TestPortableTypes: a nullable `type` pair becomes an anyOf of single types at any depth;
// a schema without one is returned byte for byte; a type array without "null", one of
// three types, or one next to an existing anyOf is left as it is; text that is no JSON is
// an error.
func TestPortableTypes(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"type":"object","properties":{"a":{"type":["string","null"]},"b":{"type":["null","array"],"items":{"type":["integer","null"]}}}}`,
			`{"properties":{"a":{"anyOf":[{"type":"string"},{"type":"null"}]},"b":{"anyOf":[{"type":"array"},{"type":"null"}],"items":{"anyOf":[{"type":"integer"},{"type":"null"}]}}},"type":"object"}`},
		{`{"type":"object",  "properties":{}}`, `{"type":"object",  "properties":{}}`},
		{`{"type":["string","integer"]}`, `{"type":["string","integer"]}`},
		{`{"type":["string","integer","null"]}`, `{"type":["string","integer","null"]}`},
		{`{"type":["string","null"],"anyOf":[{"minLength":1},{"type":"null"}]}`, `{"type":["string","null"],"anyOf":[{"minLength":1},{"type":"null"}]}`},
	} {
		got, err := portableJSON(json.RawMessage(c.in))
		if err != nil || string(got) != c.want {
			t.Errorf("portableJSON(%s) = %s, %v; want %s", c.in, got, err, c.want)
		}
	}
	if _, err := portableJSON(json.RawMessage(`{"type":`)); err == nil {
		t.Error("portableJSON of broken JSON: no error")
	}
}

package mcpclient_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentpack/gateway/shared/mcpclient"
)

func TestNormalizeToolSchema(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		want    string // normalised schema ("" when dropped)
		changed bool
		reason  string // substring of the reason ("" = no reason)
	}{
		{name: "missing", in: "", want: `{"type":"object"}`, changed: true, reason: "missing"},
		{name: "null", in: "null", want: `{"type":"object"}`, changed: true, reason: "missing"},
		{name: "empty object", in: `{}`, want: `{"type":"object"}`, changed: true, reason: "is {}"},
		{name: "empty object with spaces", in: " { } ", want: `{"type":"object"}`, changed: true, reason: "is {}"},
		{name: "only $schema", in: `{"$schema":"http://json-schema.org/draft-07/schema#"}`,
			want: `{"type":"object","$schema":"http://json-schema.org/draft-07/schema#"}`, changed: true, reason: "only $schema"},
		{name: "no type, properties kept byte for byte", in: `{"properties":{"n":{"type":"integer","maximum":18446744073709551616}},"required":["n"]}`,
			want: `{"type":"object","properties":{"n":{"type":"integer","maximum":18446744073709551616}},"required":["n"]}`, changed: true, reason: "no root type"},
		{name: "true schema", in: `true`, want: `{"type":"object"}`, changed: true, reason: "true"},
		{name: "nullable object narrowed", in: `{"type":["object","null"],"properties":{"a":{"type":"string"}}}`,
			want: `{"properties":{"a":{"type":"string"}},"type":"object"}`, changed: true, reason: "narrowed"},
		{name: "valid object unchanged", in: `{"type":"object", "properties":{"a":{"type":"string"}}}`,
			want: `{"type":"object", "properties":{"a":{"type":"string"}}}`},
		{name: "enum with an object kept", in: `{"enum":[{"a":1}]}`, want: `{"type":"object","enum":[{"a":1}]}`, changed: true, reason: "no root type"},

		{name: "false", in: `false`, reason: "false"},
		{name: "array", in: `[]`, reason: "array"},
		{name: "string", in: `"object"`, reason: "string"},
		{name: "number", in: `5`, reason: "number"},
		{name: "invalid JSON", in: `{"type":`, reason: "not valid JSON"},
		{name: "trailing garbage", in: `{} {}`, reason: "not valid JSON"},
		{name: "root type array", in: `{"type":"array","items":{}}`, reason: `"array"`},
		{name: "type list without object", in: `{"type":["string","null"]}`, reason: "does not allow"},
		{name: "type null", in: `{"type":null}`, reason: "null"},
		{name: "type number", in: `{"type":5}`, reason: "5"},
		{name: "enum without object", in: `{"enum":[1,2]}`, reason: "enum"},
		{name: "const not an object", in: `{"const":"x"}`, reason: "const"},
		{name: "does not compile", in: `{"type":"object","properties":{"a":{"type":"nonsense"}}}`, reason: "not a valid JSON Schema"},
		{name: "external ref never fetched", in: `{"type":"object","properties":{"a":{"$ref":"http://127.0.0.1:1/s.json"}}}`, reason: "not a valid JSON Schema"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var in json.RawMessage
			if tc.in != "" {
				in = json.RawMessage(tc.in)
			}
			got, changed, reason, ok := mcpclient.NormalizeToolSchema(in)
			if ok != (tc.want != "") {
				t.Fatalf("ok = %v (reason %q), want %v", ok, reason, tc.want != "")
			}
			if string(got) != tc.want {
				t.Errorf("schema = %s, want %s", got, tc.want)
			}
			if changed != tc.changed {
				t.Errorf("changed = %v, want %v", changed, tc.changed)
			}
			if (tc.reason == "") != (reason == "") || !strings.Contains(reason, tc.reason) {
				t.Errorf("reason = %q, want one containing %q", reason, tc.reason)
			}
			if ok && tc.in != "" && string(in) != tc.in {
				t.Errorf("input modified: %s", in)
			}
		})
	}
}

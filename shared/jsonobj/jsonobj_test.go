package jsonobj

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestMembers: an object's members with their raw bytes; ok is false for a duplicate
// name, trailing data, a non-object and malformed JSON.
func TestMembers(t *testing.T) {
	m, ok := Members([]byte(` {"a": [1, 2], "b":"<&>" } `))
	if !ok || len(m) != 2 || string(m["a"]) != `[1, 2]` || string(m["b"]) != `"<&>"` {
		t.Fatalf("Members = %q, %v", m, ok)
	}
	for _, bad := range []string{`{"a":1,"a":2}`, `{"a":1} {}`, `{"a":1}x`, `[1]`, `null`, `"s"`, `{"a":}`, `{1:2}`, `{"a":1`, ``} {
		if m, ok := Members([]byte(bad)); ok {
			t.Errorf("Members(%s) = %q, ok", bad, m)
		}
	}
}

// TestMemberEdits: SetMember and DeleteMember change one member and keep every other byte.
func TestMemberEdits(t *testing.T) {
	for _, tc := range []struct{ in, key, val, set, del string }{
		{`{"a":1, "task": {"ttl":5},"b" :[2]}`, "task", `null`, `{"a":1, "task": null,"b" :[2]}`, `{"a":1,"b" :[2]}`},
		{`{"task":{},"a":"x"}`, "task", `1`, `{"task":1,"a":"x"}`, `{"a":"x"}`},
		{`{ "task" : 3 }`, "task", `"y"`, `{ "task" : "y" }`, `{}`},
		{`{"a":"<&>"}`, "name", `"n"`, `{"a":"<&>","name":"n"}`, `{"a":"<&>"}`},
		{`{}`, "name", `"n"`, `{"name":"n"}`, `{}`},
	} {
		got, err := SetMember(json.RawMessage(tc.in), tc.key, json.RawMessage(tc.val))
		if err != nil || string(got) != tc.set {
			t.Errorf("SetMember(%s) = %s, %v; want %s", tc.in, got, err, tc.set)
		}
		got, err = DeleteMember(json.RawMessage(tc.in), tc.key)
		if err != nil || string(got) != tc.del {
			t.Errorf("DeleteMember(%s) = %s, %v; want %s", tc.in, got, err, tc.del)
		}
	}
	for _, bad := range []string{`[1]`, `{"a":1,"a":2}`, `{"b":1} x`, `{"b":}`, `{"b":1`} {
		if got, err := SetMember(json.RawMessage(bad), "a", json.RawMessage(`1`)); err == nil {
			t.Errorf("SetMember(%s) = %s, no error", bad, got)
		}
		if got, err := DeleteMember(json.RawMessage(bad), "a"); err == nil {
			t.Errorf("DeleteMember(%s) = %s, no error", bad, got)
		}
	}
}

// FuzzMemberEdits: SetMember and DeleteMember never panic; on a JSON object they return a
// JSON object with the member set (or gone) and every other member unchanged.
func FuzzMemberEdits(f *testing.F) {
	for _, s := range []string{`{"a":1,"name":"x"}`, `{}`, ` { "name" : [1,{"b":2}] , "c":"\u00e9" } `, `[1]`, `{"a":}`, `{"a":1}x`, `"s"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, obj []byte) {
		set, err := SetMember(obj, "name", json.RawMessage(`"n"`))
		var in map[string]json.RawMessage
		isObj := json.Unmarshal(obj, &in) == nil && in != nil
		if err != nil {
			return
		}
		var out map[string]json.RawMessage
		if json.Unmarshal(set, &out) != nil || string(out["name"]) != `"n"` {
			t.Fatalf("SetMember(%q) = %q", obj, set)
		}
		if isObj {
			for k, v := range in {
				if k != "name" && !bytes.Equal(bytes.TrimSpace(out[k]), bytes.TrimSpace(v)) {
					t.Fatalf("SetMember(%q) changed %q: %q", obj, k, set)
				}
			}
		}
		del, err := DeleteMember(set, "name")
		if err != nil {
			t.Fatalf("DeleteMember(%q): %v", set, err)
		}
		out = nil
		if json.Unmarshal(del, &out) != nil || out["name"] != nil {
			t.Fatalf("DeleteMember(%q) = %q", set, del)
		}
	})
}

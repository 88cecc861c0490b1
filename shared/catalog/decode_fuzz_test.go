package catalog

import (
	"encoding/json"
	"testing"
)

// FuzzDecode feeds the catalog document decoder hostile bytes (a document in the store is
// data, not code: a corrupted or tampered object must not crash the gateway). Decode never
// panics; what it accepts has the supported version, unique non-empty connection ids and
// exposed names and object input schemas, and survives a re-encode unchanged.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"version":1,"workspaceId":"w","generatedAt":"2026-01-01T00:00:00Z","connections":[]}`))
	f.Add([]byte(`{"version":1,"connections":[{"id":"c1","handle":"h","tools":[{"exposedName":"mcp_h_echo","upstreamName":"echo","inputSchema":{"type":"object"}}]}]}`))
	f.Add([]byte(`{"version":1,"connections":[{"id":"c1","tools":[{"exposedName":"x","inputSchema":{}},{"exposedName":"x","inputSchema":{}}]}]}`))
	f.Add([]byte(`{"version":1,"connections":[{"id":"c1"},{"id":"c1"}]}`))
	f.Add([]byte(`{"version":1,"connections":[{"id":"c1","tools":[{"exposedName":"x","inputSchema":null}]}]}`))
	f.Add([]byte(`{"version":2}`))
	f.Add([]byte(`{"version":1,"generatedAt":"not a time"}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`null`))
	f.Add([]byte(``))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := Decode(data)
		if err != nil {
			if d != nil {
				t.Fatalf("Decode returned a document and an error")
			}
			return
		}
		if d.Version != SchemaVersion {
			t.Fatalf("accepted version %d", d.Version)
		}
		ids, tools := map[string]bool{}, map[string]bool{}
		for _, c := range d.Connections {
			if c.ID == "" || ids[c.ID] {
				t.Fatalf("accepted connection id %q", c.ID)
			}
			ids[c.ID] = true
			for _, tl := range c.Tools {
				if tl.ExposedName == "" || tools[tl.ExposedName] {
					t.Fatalf("accepted tool name %q", tl.ExposedName)
				}
				tools[tl.ExposedName] = true
				var obj map[string]json.RawMessage
				if json.Unmarshal(tl.InputSchema, &obj) != nil || obj == nil {
					t.Fatalf("accepted input schema %s", tl.InputSchema)
				}
			}
		}
		again, err := json.Marshal(d)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		d2, err := Decode(again)
		if err != nil {
			t.Fatalf("re-encoded document refused: %v\n%s", err, again)
		}
		again2, _ := json.Marshal(d2)
		if string(again) != string(again2) {
			t.Fatalf("not stable:\n%s\n%s", again, again2)
		}
	})
}

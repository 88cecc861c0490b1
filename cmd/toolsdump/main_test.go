package main

import (
	"encoding/json"
	"testing"
)

// TestBinPath: a package.json "bin" as a string, as an object with the wanted entry or a
// single one, and the refusals (no bin, several entries and none wanted).
func TestBinPath(t *testing.T) {
	t.Parallel()
	tests := []struct {
		bin, want, out string
		ok             bool
	}{
		{`"dist/index.js"`, "", "dist/index.js", true},
		{`{"a":"a.js","b":"b.js"}`, "b", "b.js", true},
		{`{"only":"o.js"}`, "other", "o.js", true},
		{`{"a":"a.js","b":"b.js"}`, "c", "", false},
		{`null`, "x", "", false},
		{`{}`, "", "", false},
	}
	for _, tc := range tests {
		got, err := binPath(json.RawMessage(tc.bin), tc.want)
		if (err == nil) != tc.ok || got != tc.out {
			t.Errorf("binPath(%s, %q) = %q, %v; want %q (ok %v)", tc.bin, tc.want, got, err, tc.out, tc.ok)
		}
	}
}

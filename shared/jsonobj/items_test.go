package jsonobj

import (
	"encoding/json"
	"testing"
)

// TestString: <, > and & stay as they are; quotes and control characters are escaped.
func TestString(t *testing.T) {
	t.Parallel()
	if got := string(String("ui://d/a?x=<1>&y=\"\n")); got != `"ui://d/a?x=<1>&y=\"\n"` {
		t.Errorf("String = %s", got)
	}
}

// TestMapItems: the items f edits are replaced, every other byte kept; an array f leaves
// alone, a non-array and a malformed array come back as they are, unchanged.
func TestMapItems(t *testing.T) {
	t.Parallel()
	double := func(item json.RawMessage) (json.RawMessage, bool) {
		if string(item) == "1" {
			return json.RawMessage("2"), true
		}
		return nil, false
	}
	for _, tc := range []struct {
		in, want string
		changed  bool
	}{
		{`[ 1 , "x",1]`, `[ 2 , "x",2]`, true},
		{`[ "x" ]`, `[ "x" ]`, false},
		{`{"a":1}`, `{"a":1}`, false},
		{`[1, }`, `[1, }`, false},
		{``, ``, false},
	} {
		got, changed := MapItems(json.RawMessage(tc.in), double)
		if string(got) != tc.want || changed != tc.changed {
			t.Errorf("MapItems(%s) = %s, %v; want %s, %v", tc.in, got, changed, tc.want, tc.changed)
		}
	}
}

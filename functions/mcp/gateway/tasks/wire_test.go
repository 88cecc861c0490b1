package tasks

import "testing"

// TestCompleteResult: a stored result gets resultType "complete" when it has none, keeps
// the one it has, and text that is no JSON object is kept as stored.
func TestCompleteResult(t *testing.T) {
	for in, want := range map[string]string{
		`{"content":[]}`:                         `{"content":[],"resultType":"complete"}`,
		`{"resultType":"complete","content":[]}`: `{"resultType":"complete","content":[]}`,
		`[1]`:                                    `[1]`,
		`{"content":`:                            `{"content":`,
	} {
		if got := string(completeResult([]byte(in))); got != want {
			t.Errorf("completeResult(%s) = %s, want %s", in, got, want)
		}
	}
}

package main

import "testing"

// TestLastEventData: the last event with data wins; multi-line data is joined with "\n";
// CRLF line ends, comments, a blank priming event and other fields are handled; an
// unterminated last event is dropped; a body with no data gives nil.
func TestLastEventData(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ body, want string }{
		{"event: message\ndata: {\"a\":1}\n\n", `{"a":1}`},
		{"id: 0\ndata:\n\nevent: message\r\nid: 2\r\ndata: {\"result\":\r\ndata: {}}\r\n\r\n", "{\"result\":\n{}}"},
		{": comment\ndata: first\n\ndata: second\n\nretry: 10\n\n", "second"},
		// The HTML standard's SSE parsing drops an event cut off before its blank line.
		{"data: whole\n\ndata: cut off", "whole"},
		{"event: ping\n\n", ""},
		{"", ""},
	} {
		if got := string(lastEventData([]byte(tc.body))); got != tc.want {
			t.Errorf("lastEventData(%q) = %q, want %q", tc.body, got, tc.want)
		}
	}
}

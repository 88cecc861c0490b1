package catalog

import (
	"context"
	"testing"
)

// TestDocumentLimited: the snapshot's match is the SQL's (db.RateLimitTake): connection and
// tool narrow a limit, a nil principal or "*" applies to everyone, another principal only
// to that member; no limits, nothing applies. The limits survive the store round trip (they
// travel in the index).
func TestDocumentLimited(t *testing.T) {
	t.Parallel()
	star, bob := "*", "bob"
	cases := []struct {
		name          string
		limits        []RateLimit
		conn, tool, p string
		want          bool
	}{
		{"none", nil, "c1", "t1", "alice", false},
		{"workspace-wide", []RateLimit{{ID: "1"}}, "c1", "t1", "alice", true},
		{"other connection", []RateLimit{{ID: "1", ConnectionID: "c2"}}, "c1", "t1", "alice", false},
		{"this connection", []RateLimit{{ID: "1", ConnectionID: "c1"}}, "c1", "t1", "alice", true},
		{"other tool", []RateLimit{{ID: "1", Tool: "t2"}}, "c1", "t1", "alice", false},
		{"this tool", []RateLimit{{ID: "1", Tool: "t1"}}, "c1", "t1", "alice", true},
		{"per member", []RateLimit{{ID: "1", Principal: &star}}, "c1", "t1", "alice", true},
		{"another member", []RateLimit{{ID: "1", Principal: &bob}}, "c1", "t1", "alice", false},
		{"that member", []RateLimit{{ID: "1", Principal: &bob}}, "c1", "t1", "bob", true},
	}
	for _, c := range cases {
		d := &Document{RateLimits: c.limits}
		if got := d.Limited(c.conn, c.tool, c.p); got != c.want {
			t.Errorf("%s: Limited = %v, want %v", c.name, got, c.want)
		}
	}
	store := &DiskStore{Dir: t.TempDir()}
	per := 5
	doc := &Document{Version: SchemaVersion, WorkspaceID: "ws", RateLimits: []RateLimit{{ID: "1", Tool: "t1", Principal: &star, PerMinute: &per}},
		Connections: []Connection{}}
	if _, err := WriteDocument(context.Background(), store, doc); err != nil {
		t.Fatal(err)
	}
	got, _, err := ReadDocument(context.Background(), store, "ws")
	if err != nil || len(got.RateLimits) != 1 || !got.Limited("c", "t1", "x") || got.Limited("c", "t2", "x") {
		t.Fatalf("read back: %+v %v", got, err)
	}
}

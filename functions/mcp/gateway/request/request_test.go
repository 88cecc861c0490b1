package request

import (
	"strings"
	"testing"
	"time"

	"github.com/agentpack/gateway/shared/catalog"
)

// TestRelayedIsBounded: an upstream that sends notifications without end during a call
// must not grow the request's buffer past the response limit.
func TestRelayedIsBounded(t *testing.T) {
	t.Parallel()
	var r Relayed
	msg := strings.Repeat("x", 64<<10)
	for range 1000 { // ~64 MiB offered
		r.Add("notifications/message", map[string]string{"data": msg})
	}
	total := 0
	for _, ev := range r.Take() {
		total += len(ev)
	}
	if total == 0 || total > MaxRelayedBytes {
		t.Fatalf("kept %d bytes of relayed notifications, limit %d", total, MaxRelayedBytes)
	}
	if len(r.Take()) != 0 {
		t.Fatal("Take did not empty the buffer")
	}
}

// TestWithDeadline: built-ins run under the request's deadline (go-sdk drops it).
func TestWithDeadline(t *testing.T) {
	t.Parallel()
	st := &State{Deadline: time.Now().Add(5 * time.Second)}
	ctx, cancel := st.WithDeadline(t.Context())
	defer cancel()
	dl, ok := ctx.Deadline()
	if !ok || dl.After(st.Deadline) {
		t.Fatalf("deadline %v %v, request's %v", dl, ok, st.Deadline)
	}
	ctx2, cancel2 := (&State{}).WithDeadline(t.Context())
	defer cancel2()
	if _, ok := ctx2.Deadline(); ok {
		t.Fatal("a deadline without one on the request")
	}
	near := &State{Deadline: time.Now().Add(500 * time.Millisecond)}
	ctx3, cancel3 := near.WithDeadline(t.Context())
	defer cancel3()
	if dl, _ := ctx3.Deadline(); time.Until(dl) < 50*time.Millisecond {
		t.Fatalf("less than the 100 ms floor left: %v", time.Until(dl))
	}
}

func TestVisible(t *testing.T) {
	t.Parallel()
	ws := &catalog.Connection{ID: "a", Scope: "workspace"}
	proj := &catalog.Connection{ID: "b", Scope: "project", ProjectID: "p1"}
	cases := []struct {
		name string
		st   State
		c    *catalog.Connection
		want bool
	}{
		{"workspace connection, no chat", State{}, ws, true},
		{"project connection, other project", State{ProjectID: "p2"}, proj, false},
		{"project connection, its project", State{ProjectID: "p1"}, proj, true},
		{"chat allows it", State{Allowed: map[string]bool{"a": true}}, ws, true},
		{"chat does not allow it", State{Allowed: map[string]bool{"b": true}}, ws, false},
	}
	for _, c := range cases {
		if got := c.st.Visible(c.c); got != c.want {
			t.Errorf("%s: Visible = %v, want %v", c.name, got, c.want)
		}
	}
}

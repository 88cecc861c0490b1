package gateway

import (
	"strings"
	"testing"
	"time"
)

// TestRelayedIsBounded: an upstream that sends notifications without end during a call
// must not grow the request's buffer past the response limit.
func TestRelayedIsBounded(t *testing.T) {
	var r relayed
	msg := strings.Repeat("x", 64<<10)
	for range 1000 { // ~64 MiB offered
		r.add("notifications/message", map[string]string{"data": msg})
	}
	total := 0
	for _, ev := range r.take() {
		total += len(ev)
	}
	if total == 0 || total > maxResponseBytes {
		t.Fatalf("kept %d bytes of relayed notifications, limit %d", total, maxResponseBytes)
	}
}

// TestWithRequestDeadline: built-ins run under the request's deadline (go-sdk drops it).
func TestWithRequestDeadline(t *testing.T) {
	st := &requestState{deadline: time.Now().Add(5 * time.Second)}
	ctx, cancel := withRequestDeadline(t.Context(), st)
	defer cancel()
	dl, ok := ctx.Deadline()
	if !ok || dl.After(st.deadline) {
		t.Fatalf("deadline %v %v, request's %v", dl, ok, st.deadline)
	}
	ctx2, cancel2 := withRequestDeadline(t.Context(), &requestState{})
	defer cancel2()
	if _, ok := ctx2.Deadline(); ok {
		t.Fatal("a deadline without one on the request")
	}
}

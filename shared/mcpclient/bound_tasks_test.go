package mcpclient

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agentpack/gateway/shared/testpeer"
)

// TestSessionBoundClosesEverySurplusSession: sessions with calls in flight cannot be
// evicted, so concurrent connects take the pool above its bound; the first connect after
// those calls end closes every idle session it takes to get back under the bound (here
// three at once), not one per connect as before.
func TestSessionBoundClosesEverySurplusSession(t *testing.T) {
	t.Parallel()
	up := testpeer.NewRawUpstream(t, false)
	up.Gate = make(chan struct{}) // the three calls stay in flight until all three arrived
	p := newPool(t, &Options{FixedVersion: true, MaxSessionBytes: 1 * SessionBytes})
	tg := func(i int) Target { return Target{ConnectionID: fmt.Sprintf("c%d", i), URL: up.URL} }
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i := range 3 {
		wg.Go(func() {
			_, errs[i] = p.Forward(t.Context(), tg(i), "tools/call", json.RawMessage(`{"name":"report","arguments":{"q":"x"}}`), nil)
		})
	}
	for deadline := time.Now().Add(30 * time.Second); len(up.Received("tools/call")) < 3; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of the three calls reached the upstream in 30 s", len(up.Received("tools/call")))
		}
	}
	close(up.Gate)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n, _, _, ev := p.SessionStats(); n != 3 || ev != 0 {
		t.Fatalf("after three concurrent slow calls: %d sessions, %d evictions; want 3 (all in flight when each connected), 0", n, ev)
	}
	if _, err := p.Forward(t.Context(), tg(3), "tools/call", json.RawMessage(`{"name":"plain","arguments":{}}`), nil); err != nil {
		t.Fatal(err)
	}
	n, _, _, ev := p.SessionStats()
	if n != 1 || ev != 3 {
		t.Fatalf("after one more connect: %d sessions, %d evictions; want 1 (the bound), 3", n, ev)
	}
	if st := p.Status(); len(st) != 1 || st[0].ConnectionID != "c3" {
		t.Errorf("live sessions %+v, want c3 only", st)
	}
}

// TestSessionBoundKeepsTaskSessions: a session on which the upstream created a task that
// has not ended is not evicted, even as the least recently used idle one: tasks/get and
// tasks/result for it go on the same session (no new initialize). Once tasks/result has
// returned, the session is evictable again; a task whose ttl ran out no longer holds it.
func TestSessionBoundKeepsTaskSessions(t *testing.T) {
	t.Parallel()
	up := testpeer.NewRawUpstream(t, false).WithTasks()
	p := newPool(t, &Options{FixedVersion: true, MaxSessionBytes: 2 * SessionBytes})
	tg := func(i int) Target { return Target{ConnectionID: fmt.Sprintf("c%d", i), URL: up.URL} }
	call := func(i int, method, params string) json.RawMessage {
		t.Helper()
		res, err := p.Forward(t.Context(), tg(i), method, json.RawMessage(params), nil)
		if err != nil {
			t.Fatalf("c%d %s: %v", i, method, err)
		}
		return res
	}
	res := call(0, "tools/call", `{"name":"report","arguments":{"q":"x","delayMs":300},"task":{"ttl":60000}}`)
	var created struct {
		Task taskInfo `json:"task"`
	}
	if err := json.Unmarshal(res, &created); err != nil || created.Task.TaskID == "" || created.Task.Status != "working" {
		t.Fatalf("task-augmented call answered %s", res)
	}
	taskParams := `{"taskId":"` + created.Task.TaskID + `"}`
	call(1, "tools/call", `{"name":"plain","arguments":{}}`)
	call(2, "tools/call", `{"name":"plain","arguments":{}}`) // c0 is the least recently used: kept, c1 goes
	live := func() string {
		var ids []string
		for _, s := range p.Status() {
			ids = append(ids, s.ConnectionID)
		}
		return fmt.Sprint(ids)
	}
	if got := live(); got != "[c0 c2]" {
		t.Fatalf("live sessions %s, want [c0 c2] (c0 holds a task)", got)
	}
	inits := len(up.Received("initialize"))
	var got taskInfo
	if err := json.Unmarshal(call(0, "tasks/get", taskParams), &got); err != nil || got.Status != "working" {
		t.Fatalf("tasks/get: %+v %v", got, err)
	}
	call(0, "tasks/result", taskParams) // waits for the task (300 ms)
	if n := len(up.Received("initialize")); n != inits {
		t.Errorf("tasks/get and tasks/result made %d new connects, want 0 (same session)", n-inits)
	}
	p.mu.Lock()
	s0 := p.conns["c0"].sess
	p.mu.Unlock()
	if n := s0.liveTasks(time.Now()); n != 0 {
		t.Fatalf("after tasks/result the session still holds %d tasks", n)
	}
	// c0 is now the least recently used idle session without a task: c3's connect closes it.
	call(2, "tools/call", `{"name":"plain","arguments":{}}`)
	time.Sleep(2 * time.Millisecond)
	call(0, "tools/call", `{"name":"plain","arguments":{}}`) // c0 most recent again
	call(3, "tools/call", `{"name":"plain","arguments":{}}`)
	if got := live(); got != "[c0 c3]" {
		t.Errorf("live sessions %s, want [c0 c3] (c2 the least recently used, no task)", got)
	}
	// A task whose ttl ran out holds nothing, and a terminal tasks/get releases it.
	s0.trackTask("tools/call", json.RawMessage(`{"task":{}}`), json.RawMessage(`{"task":{"taskId":"t-short","status":"working","ttl":1}}`))
	s0.trackTask("tools/call", json.RawMessage(`{"task":{}}`), json.RawMessage(`{"taskId":"t-flat","status":"working","ttl":null}`))
	time.Sleep(5 * time.Millisecond)
	if n := s0.liveTasks(time.Now()); n != 1 {
		t.Fatalf("live tasks %d, want 1 (t-flat; t-short expired)", n)
	}
	s0.trackTask("tasks/get", json.RawMessage(`{"taskId":"t-flat"}`), json.RawMessage(`{"taskId":"t-flat","status":"input_required"}`))
	if !s0.holdsTask(time.Now()) {
		t.Fatal("input_required released the task")
	}
	s0.trackTask("tasks/get", json.RawMessage(`{"taskId":"t-flat"}`), json.RawMessage(`{"taskId":"t-flat","status":"failed"}`))
	if s0.holdsTask(time.Now()) {
		t.Fatal("a failed task still holds the session")
	}
}

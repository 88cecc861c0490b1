package mcpclient

import (
	"bytes"
	"encoding/json"
	"time"
)

// Upstream tasks and the session bound.
//
// An upstream that runs tasks itself (MCP 2025-11-25 "Tasks") may tie a task to the
// session that created it: a stateful server can forget the task when the session is
// deleted, and then tasks/get and tasks/result for it answer "unknown task". The gateway
// keeps the upstream's task id and forwards tasks/* on the connection's cached session
// (docs/TASKS.md), so closing that session to stay under MaxSessionBytes could lose the
// task. So a session that created a task that has not been seen to end is not evicted:
//
//   - a forwarded tools/call whose params carry "task" and whose result is a task
//     (the 2025-11-25 CreateTaskResult {"task": {…}}, or the flat 2026 form with a
//     top-level taskId) holds the session, until the task's ttl runs out (an unlimited or
//     absent ttl: MaxTaskHold, the gateway's own bound on a task's life);
//   - a successful tasks/result or tasks/cancel for that id, or a tasks/get answering a
//     terminal status (completed, failed, cancelled), lets it go.
//
// The bound may then be passed while tasks hold sessions; the first connect after they end
// closes the surplus (overBudgetLocked). A session closed for another reason (the upstream
// ended it, a configuration change, Disconnect) is not kept: there the task is lost as the
// upstream decides, and tasks/* answer its error.

// MaxTaskHold is the longest a task keeps its session from eviction: the gateway's bound
// on a task's life (docs/TASKS.md, 24 h).
const MaxTaskHold = 24 * time.Hour

// taskInfo is what the pool reads of an upstream task: its id, status and ttl (ms; null or
// absent: unlimited).
type taskInfo struct {
	TaskID string           `json:"taskId"`
	Status string           `json:"status"`
	TTL    *json.RawMessage `json:"ttl"`
}

// trackTask records (or releases) the upstream task the forwarded request method, with
// params, answered by result, created (or ended) on s. Other methods cost one comparison.
func (s *session) trackTask(method string, params, result json.RawMessage) {
	switch method {
	case "tools/call":
		if !bytes.Contains(params, []byte(`"task"`)) || !bytes.Contains(result, []byte(`"taskId"`)) {
			return
		}
		var r struct {
			Task *taskInfo `json:"task"`
			taskInfo
		}
		if json.Unmarshal(result, &r) != nil {
			return
		}
		ti := r.taskInfo
		if r.Task != nil {
			ti = *r.Task
		}
		if ti.TaskID == "" || terminalTask(ti.Status) {
			return
		}
		hold := MaxTaskHold
		if ti.TTL != nil {
			var ms float64
			if json.Unmarshal(*ti.TTL, &ms) == nil && ms > 0 && time.Duration(ms)*time.Millisecond < hold {
				hold = time.Duration(ms) * time.Millisecond
			}
		}
		s.tasksMu.Lock()
		if s.tasks == nil {
			s.tasks = map[string]time.Time{}
		}
		s.tasks[ti.TaskID] = time.Now().Add(hold)
		s.tasksMu.Unlock()
	case "tasks/get", "tasks/result", "tasks/cancel":
		var p struct {
			TaskID string `json:"taskId"`
		}
		if json.Unmarshal(params, &p) != nil || p.TaskID == "" {
			return
		}
		if method == "tasks/get" {
			var r taskInfo
			if json.Unmarshal(result, &r) != nil || !terminalTask(r.Status) {
				return
			}
		}
		s.tasksMu.Lock()
		delete(s.tasks, p.TaskID)
		s.tasksMu.Unlock()
	}
}

// terminalTask reports whether status ends a task (MCP 2025-11-25: completed, failed,
// cancelled; working and input_required do not).
func terminalTask(status string) bool {
	return status == "completed" || status == "failed" || status == "cancelled"
}

// holdsTask reports whether a task created on s is live at now (expired ones are dropped).
func (s *session) holdsTask(now time.Time) bool {
	s.tasksMu.Lock()
	defer s.tasksMu.Unlock()
	for id, until := range s.tasks {
		if now.Before(until) {
			return true
		}
		delete(s.tasks, id)
	}
	return false
}

// liveTasks is how many tasks hold s at now (tests, Status).
func (s *session) liveTasks(now time.Time) int {
	s.tasksMu.Lock()
	defer s.tasksMu.Unlock()
	n := 0
	for _, until := range s.tasks {
		if now.Before(until) {
			n++
		}
	}
	return n
}

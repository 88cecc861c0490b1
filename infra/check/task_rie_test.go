package check

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/gateway/infra/rie"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/dbtest"
	"github.com/agentpack/gateway/shared/testpeer"
	"github.com/google/uuid"
)

// TestTaskUnderEmulator: the MCP function's asynchronous task path under the Lambda
// runtime emulator. The invocation the gateway sends itself (events/mcp-task.json's shape,
// {"agentpackTask": tasks.Job}) runs in its own invocation, forwards the call to a real
// upstream on loopback and stores the upstream's result in the task row.
func TestTaskUnderEmulator(t *testing.T) {
	root := testpeer.RepoRoot(t)
	emulator := requireEmulator(t, root)
	pool, dbURL := dbtest.Fresh(t)
	ctx := t.Context()
	up := testpeer.NewRawUpstream(t, false)
	ws := uuid.NewString()
	if err := db.WorkspaceUpsert(ctx, pool, ws, "Tasks"); err != nil {
		t.Fatal(err)
	}
	conn, err := db.ConnectionCreate(ctx, pool, &db.ConnectionNew{Name: "Raw", URL: up.URL, TransportType: "streamable-http",
		Enabled: true, Source: "manual", WorkspaceID: &ws, CreatedBy: "infra-check"})
	if err != nil {
		t.Fatal(err)
	}
	task, err := db.TaskInsert(ctx, pool, &db.Task{ID: "infracheck-task-0001", WorkspaceID: ws, Principal: "infra-check",
		ConnectionID: &conn.ID, Tool: "mcp_raw_report", TTLMS: 600_000, PollIntervalMS: 1000})
	if err != nil {
		t.Fatal(err)
	}

	bootstrap, _, err := rie.Build(ctx, root, "mcp", t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	e := startEmulated(t, emulator, bootstrap, localFunctionEnv(t, "mcp", dbURL), 60*time.Second)
	raw, err := os.ReadFile(filepath.Join(root, "events", "mcp-task.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ev map[string]map[string]any
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatal(err)
	}
	job := ev["agentpackTask"]
	job["taskId"], job["workspaceId"], job["connectionId"], job["principal"] = task.ID, ws, conn.ID, "infra-check"
	payload, _ := json.Marshal(ev)
	inv, err := e.Invoke(ctx, payload)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(inv.Payload), `"ok":true`) {
		t.Fatalf("task invocation answered %s", inv.Payload)
	}
	got, err := db.TaskGet(ctx, pool, task.ID, ws, "infra-check")
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != db.TaskCompleted || string(got.Result) != testpeer.RawCallResult {
		t.Fatalf("task after the invocation: status %s result %s", got.Status, got.Result)
	}
	// Lambda's asynchronous delivery is at least once: the same event again runs nothing
	// (the worker claims its task row).
	if inv, err = e.Invoke(ctx, payload); err != nil || !strings.Contains(string(inv.Payload), `"ok":true`) {
		t.Fatalf("second invocation: %v %s", err, inv.Payload)
	}
	if n := len(up.Received("tools/call")); n != 1 {
		t.Errorf("the upstream received %d tools/call, want 1 (a redelivered event must not run the call again)", n)
	}
}

package check

import (
	"context"
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

// TestHealthCheckUnderEmulator runs the healthcheck bootstrap under the Lambda runtime
// emulator, fed the EventBridge scheduled event of events/, against a real loopback
// upstream (docs/DESIGN.md §9a, §12): with a 90 s function timeout the pass checks the installed
// entry, writes healthy, and answers its summary; with a 30 s timeout — less than a
// worst-case check (≈ 57 s with the tool refresh) plus the reserve — it starts nothing and reports the entry as
// skipped, leaving the state untouched.
func TestHealthCheckUnderEmulator(t *testing.T) {
	root := testpeer.RepoRoot(t)
	emulator := requireEmulator(t, root)
	pool, dbURL := dbtest.Fresh(t)
	ctx := t.Context()
	up := testpeer.NewFixture(t, nil)
	ws := uuid.NewString()
	if err := db.WorkspaceUpsert(ctx, pool, ws, "RIE"); err != nil {
		t.Fatal(err)
	}
	if err := db.CatalogEntryUpsertSeed(ctx, pool, &db.CatalogSeedEntry{Name: "rie-upstream", URL: up.URL,
		TransportType: "streamable-http", VerificationTier: "unverified"}); err != nil {
		t.Fatal(err)
	}
	entry, err := db.CatalogEntryGetByName(ctx, pool, "rie-upstream")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ConnectionCreate(ctx, pool, &db.ConnectionNew{Name: "rie-upstream", URL: up.URL,
		TransportType: "streamable-http", Headers: map[string]string{"X-Api-Key": "rie-secret-value"},
		Enabled: true, Source: "marketplace", CatalogEntryID: &entry.ID, WorkspaceID: &ws}); err != nil {
		t.Fatal(err)
	}
	event, err := os.ReadFile(filepath.Join(root, "events", "healthcheck-scheduled.json"))
	if err != nil {
		t.Fatal(err)
	}
	bootstrap, _, err := rie.Build(ctx, root, "healthcheck", t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	invoke := func(t *testing.T, timeout time.Duration) (summary struct {
		Checked, Healthy, Skipped int
		Results                   []struct{ EntryName, Status, Transport string }
	}, output string) {
		t.Helper()
		e := startEmulated(t, emulator, bootstrap, localFunctionEnv(t, "healthcheck", dbURL), timeout)
		ictx, cancel := context.WithTimeout(ctx, timeout+10*time.Second)
		defer cancel()
		inv, err := e.Invoke(ictx, event)
		if err != nil {
			t.Fatal(err)
		}
		if inv.Status != 200 || strings.Contains(string(inv.Payload), `"errorMessage"`) {
			t.Fatalf("invoke: %d %s\n%s", inv.Status, inv.Payload, e.Output())
		}
		if err := json.Unmarshal(inv.Payload, &summary); err != nil {
			t.Fatalf("summary: %v: %s", err, inv.Payload)
		}
		// The function's own lines reach the emulator's output through a pipe that may lag
		// the invoke's answer on a busy machine: wait (bounded) for the pass's summary line.
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if strings.Contains(e.Output(), `"msg":"health check pass"`) {
				break
			}
		}
		return summary, e.Output()
	}

	t.Run("deadline too short: skipped", func(t *testing.T) {
		s, out := invoke(t, 30*time.Second)
		if s.Checked != 0 || s.Skipped != 1 || s.Results[0].Status != "skipped" {
			t.Fatalf("summary %+v", s)
		}
		if e, _ := db.CatalogEntryGet(ctx, pool, entry.ID); e.LastHealthCheck != nil {
			t.Fatalf("a skipped entry was written: %+v", e)
		}
		if !strings.Contains(out, `"skipped_entries":["rie-upstream"]`) {
			t.Fatalf("the summary log does not name the skipped entry:\n%s", out)
		}
	})
	t.Run("pass", func(t *testing.T) {
		s, out := invoke(t, 90*time.Second)
		if s.Checked != 1 || s.Healthy != 1 || s.Results[0].Status != "healthy" || s.Results[0].Transport != "streamable-http" {
			t.Fatalf("summary %+v", s)
		}
		e, err := db.CatalogEntryGet(ctx, pool, entry.ID)
		if err != nil || e.HealthStatus == nil || *e.HealthStatus != "healthy" || e.LastHealthCheck == nil {
			t.Fatalf("stored state %+v %v", e, err)
		}
		for _, want := range []string{`"msg":"health check pass"`, `"Namespace":"Agentpack/HealthCheck"`, `"checked":1`} {
			if !strings.Contains(out, want) {
				t.Errorf("function output lacks %s:\n%s", want, out)
			}
		}
		if strings.Contains(out, "rie-secret-value") {
			t.Error("a header value reached the function's output")
		}
		var tools int // the refresh after the successful check stored the upstream's tools
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM mcp_connection_tools t JOIN mcp_connections c
			ON c.id = t.connection_id WHERE c.catalog_entry_id = $1`, entry.ID).Scan(&tools); err != nil || tools == 0 {
			t.Errorf("tools after the pass: %d %v", tools, err)
		}
		if up.CountRequests("POST", "") == 0 {
			t.Error("the upstream saw no request")
		}
	})
}

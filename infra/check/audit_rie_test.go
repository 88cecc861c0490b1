package check

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/gateway/infra/rie"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/dbtest"
	"github.com/agentpack/gateway/shared/testpeer"
	"github.com/jackc/pgx/v5"
)

// TestAuditDrainUnderEmulator (issue 31): the mcp bootstrap under the Lambda runtime
// emulator, which implements the Extensions API: the process registers its internal drain
// extension (lambdaapp.RegisterDrain; the emulator logs "Internal agent agentpack-drain …
// registered, subscribed to [INVOKE]"), and the invocation of an audited call (the admin
// built-in agentpack_ratelimit_set) does not end — no next invocation, no freeze — until the
// call's audit row is committed. With audit_events locked by the test no row can commit:
// the invocation is still open when the lock is released, and once it ends the row is in
// the table.
//
// The emulator differs from Lambda in one respect: it answers the invoke request only when
// the invocation ends, extensions included, whereas Lambda returns the function's response
// as soon as the runtime posts it and runs the extension's post-invoke work after. So the
// answer not waiting on the audit write is shown by the local stack
// (cmd/local/stack TestAuditKilledAfterAnswer), and held-until-committed here.
func TestAuditDrainUnderEmulator(t *testing.T) {
	root := testpeer.RepoRoot(t)
	emulator := requireEmulator(t, root)
	_, dbURL := dbtest.Fresh(t)
	seedEventRows(t, dbURL)
	ctx := t.Context()
	token, err := auth.Mint(testJWTSecret, auth.Principal{Subject: "infra-audit", Role: auth.RoleAdmin,
		Workspaces: []string{eventWorkspace}}, 15*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	bootstrap, _, err := rie.Build(ctx, root, "mcp", t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	e, err := rie.Start(ctx, rie.Options{Emulator: emulator, Bootstrap: bootstrap, Timeout: 60 * time.Second,
		Env: []string{"AWS_LAMBDA_FUNCTION_NAME=mcp", "AWS_REGION=eu-west-1", "APP_ENV=local", "LOG_LEVEL=info",
			"DATABASE_URL=" + dbURL, "JWT_SECRET=" + testJWTSecret, "CATALOG_DIR=" + t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Stop)
	defer func() {
		if t.Failed() {
			t.Logf("emulator output:\n%s", e.Output())
		}
	}()
	// A warm environment first (the cold invoke also proves the registration did not
	// break init).
	if inv, err := e.Invoke(ctx, loadEvent(t, root, "mcp-tools-list.json", token)); err != nil {
		t.Fatal(err)
	} else {
		httpOK(t, inv, 200)
	}

	lock, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close(context.Background())
	tx, err := lock.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `LOCK TABLE audit_events IN SHARE ROW EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	released := false
	release := func() {
		if !released {
			released = true
			_ = tx.Rollback(context.Background())
		}
	}
	defer release()

	var ev map[string]any
	if err := json.Unmarshal(loadEvent(t, root, "mcp-tools-list.json", token), &ev); err != nil {
		t.Fatal(err)
	}
	body := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"agentpack_ratelimit_set","arguments":{"perDay":1000000}}}`
	ev["body"] = body
	ev["headers"].(map[string]any)["content-length"] = fmt.Sprint(len(body))
	call, _ := json.Marshal(ev)
	rows := func() (n int) {
		c, err := pgx.Connect(context.Background(), dbURL)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(context.Background())
		if err := c.QueryRow(context.Background(), `SELECT count(*) FROM audit_events WHERE tool = 'agentpack_ratelimit_set'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	type answer struct {
		r   rie.HTTPResponse
		err error
	}
	done := make(chan answer, 1)
	go func() {
		inv, err := e.Invoke(context.Background(), call)
		if err != nil {
			done <- answer{err: err}
			return
		}
		r, err := inv.HTTP()
		done <- answer{r, err}
	}()
	// Held for as long as the row cannot commit; a bound only so that the test ends (below
	// the writer's 10 s batch timeout, so that the held INSERT then commits).
	select {
	case a := <-done:
		t.Fatalf("the invocation ended (%d %v) while its audit row could not commit: no extension held it", a.r.StatusCode, a.err)
	case <-time.After(min(testpeer.Scaled(3*time.Second), 8*time.Second)):
	}
	release()
	select {
	case a := <-done:
		if a.err != nil || a.r.StatusCode != 200 || !strings.Contains(a.r.Body, `"ok":true`) {
			t.Fatalf("the audited call: %d %v %s", a.r.StatusCode, a.err, a.r.Body)
		}
	case <-time.After(testpeer.Scaled(60 * time.Second)):
		t.Fatal("the invocation did not end after its row could commit")
	}
	if n := rows(); n != 1 {
		t.Fatalf("%d audit rows of the call when its invocation ended, want 1", n)
	}
	if !strings.Contains(e.Output(), "Internal agent agentpack-drain") {
		t.Error("the emulator did not log the drain extension's registration")
	}
}

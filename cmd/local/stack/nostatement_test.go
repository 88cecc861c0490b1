package stack_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/agentpack/gateway/cmd/local/stacktest"
	"github.com/agentpack/gateway/shared/testpeer"
)

// answerPath are the statements of texts that are not the audit writer's (which runs after
// the answer): its batch is one call of migrations/00047's audit_insert.
func answerPath(texts []string) []string {
	var out []string
	for _, q := range texts {
		if !strings.HasPrefix(strings.TrimSpace(q), "SELECT audit_insert(") {
			out = append(out, strings.Join(strings.Fields(q), " "))
		}
	}
	return out
}

// TestNoStatementWithoutLimit (issue 31): on a warm instance a proxied call that no rate
// limit applies to makes no Postgres statement before its answer (the limits travel with
// the catalog snapshot; the audit row is written after the answer). Once an admin sets a
// limit (REST, which republishes the catalog), each call makes exactly one statement: the
// rate-limit count. Seen on the wire (testpeer.PgWire).
func TestNoStatementWithoutLimit(t *testing.T) {
	t.Parallel()
	var wire *testpeer.PgWire
	w := newWorld(t, &stacktest.Options{DatabaseVia: func(t testing.TB, direct string) string {
		wire = testpeer.NewPgWire(t, direct)
		return wire.URL
	}})
	a := w.ws["A"]
	path, echo := "/mcp/"+a.id, "mcp_"+a.handle+"_echo"
	call := func() {
		t.Helper()
		if st, _, out := w.call(t, path, a.member, echo, map[string]any{"message": "x"}, nil); st != 200 || out != "ok" {
			t.Fatalf("call: %d %s", st, out)
		}
	}
	call() // warm: the connection's target is read once per process
	const n = 20
	before := len(wire.Texts())
	for range n {
		call()
	}
	if got := answerPath(wire.Texts()[before:]); len(got) != 0 {
		t.Fatalf("%d calls without a limit made %d statements before their answers:\n%s", n, len(got), strings.Join(got, "\n"))
	}

	st, b := w.do(t, "POST", "/api/rate-limits", a.admin, map[string]any{"workspaceId": a.id, "tool": echo, "perMinute": 1000})
	mustStatus(t, "set a limit", st, http.StatusCreated, b)
	call() // the stack's catalog cache was invalidated by the publish
	before = len(wire.Texts())
	for range n {
		call()
	}
	got := answerPath(wire.Texts()[before:])
	if len(got) != n {
		t.Fatalf("%d limited calls made %d statements, want one each:\n%s", n, len(got), strings.Join(got, "\n"))
	}
	for _, q := range got {
		if !strings.Contains(q, "INSERT INTO rate_limit_counters") {
			t.Fatalf("a limited call's statement is not the rate-limit count: %s", q)
		}
	}
}

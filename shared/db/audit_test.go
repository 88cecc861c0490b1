package db_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/dbtest"
)

func auditRows(ws string, n int, kind string) []*db.AuditEvent {
	out := make([]*db.AuditEvent, n)
	for i := range out {
		w := ws
		out[i] = &db.AuditEvent{RequestID: fmt.Sprintf("r%d", i), Principal: "p", WorkspaceID: &w,
			Tool: fmt.Sprintf("t%d", i), Version: "v", Kind: kind, DurationMS: float64(i) + 0.5, ArgsDigest: "d"}
	}
	return out
}

// TestAuditEventInsert: every row of a batch is written with its values; a batch
// with one bad row writes nothing; an oversized batch is refused; none and one row work;
// the largest batch fits one statement; a row's chat is kept and grouped on by UsageByKey.
func TestAuditEventInsert(t *testing.T) {
	t.Parallel()
	pool, _ := dbtest.Fresh(t)
	ctx := t.Context()
	count := func() int {
		t.Helper()
		l, err := db.AuditEventList(ctx, pool, wsA, 200)
		if err != nil {
			t.Fatal(err)
		}
		return len(l)
	}

	if err := db.AuditEventInsert(ctx, pool); err != nil {
		t.Fatalf("empty batch: %v", err)
	}
	if err := db.AuditEventInsert(ctx, pool, auditRows(wsA, 3, "proxied")...); err != nil {
		t.Fatal(err)
	}
	l, err := db.AuditEventList(ctx, pool, wsA, 200)
	if err != nil || len(l) != 3 {
		t.Fatalf("after a batch of 3: %d rows, %v", len(l), err)
	}
	got := map[string]db.AuditEvent{}
	for _, e := range l {
		got[e.RequestID] = e
	}
	for i := range 3 {
		e, ok := got[fmt.Sprintf("r%d", i)]
		if !ok || e.Tool != fmt.Sprintf("t%d", i) || e.DurationMS != float64(i)+0.5 || e.Kind != "proxied" ||
			e.Principal != "p" || e.Version != "v" || e.ArgsDigest != "d" || e.ConnectionID != nil {
			t.Errorf("row r%d = %+v", i, e)
		}
	}

	bad := auditRows(wsA, 3, "proxied")
	bad[2].Kind = "other" // CHECK (kind IN ('builtin', 'proxied'))
	if err := db.AuditEventInsert(ctx, pool, bad...); apperr.CodeOf(err) != apperr.Validation {
		t.Fatalf("batch with a bad row: %v, want VALIDATION_ERROR", err)
	}
	if n := count(); n != 3 {
		t.Fatalf("a failed batch wrote rows: %d, want 3", n)
	}

	if err := db.AuditEventInsert(ctx, pool, auditRows(wsA, db.AuditEventBatchMax+1, "builtin")...); apperr.CodeOf(err) != apperr.Validation {
		t.Fatalf("oversized batch: %v, want VALIDATION_ERROR", err)
	}
	if n := count(); n != 3 {
		t.Fatalf("an oversized batch wrote rows: %d, want 3", n)
	}

	if err := db.AuditEventInsert(ctx, pool, auditRows(wsA, 1, "builtin")...); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 4 {
		t.Fatalf("after a batch of 1: %d rows, want 4", n)
	}
	// Keyed rows: a retried batch writes nothing twice; the time given is kept.
	keyed := auditRows(wsA, 2, "proxied")
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i, e := range keyed {
		e.RowKey = fmt.Sprintf("dddddddd-0000-4000-8000-00000000000%d", i)
		e.OccurredAt = at
	}
	for range 2 {
		if err := db.AuditEventInsert(ctx, pool, keyed...); err != nil {
			t.Fatal(err)
		}
	}
	if n := count(); n != 6 {
		t.Fatalf("after a keyed batch written twice: %d rows, want 6", n)
	}
	if l, _ := db.AuditEventList(ctx, pool, wsA, 200); !l[len(l)-1].OccurredAt.Equal(at) {
		t.Errorf("oldest row at %v, want the given %v", l[len(l)-1].OccurredAt, at)
	}
	keyed[0].RowKey = "not-a-uuid"
	if err := db.AuditEventInsert(ctx, pool, keyed...); apperr.CodeOf(err) != apperr.Validation {
		t.Fatalf("a row key that is not a UUID: %v, want VALIDATION_ERROR", err)
	}
	// A batch mixing rows with and without a chat keeps each row's chat, and UsageByKey
	// groups them per chat ("none" for the rows without one); an unknown grouping is refused.
	wsC := "aaaaaaaa-0000-4000-8000-0000000000c1"
	if err := db.WorkspaceUpsert(ctx, pool, wsC, "chats"); err != nil {
		t.Fatal(err)
	}
	chat1, chat2 := "cccccccc-0000-4000-8000-000000000001", "cccccccc-0000-4000-8000-000000000002"
	mixed := auditRows(wsC, 6, "proxied")
	for i, c := range []*string{&chat1, &chat1, &chat1, &chat2, nil, nil} {
		mixed[i].ChatID = c
	}
	if err := db.AuditEventInsert(ctx, pool, mixed...); err != nil {
		t.Fatal(err)
	}
	rows, err := db.AuditEventList(ctx, pool, wsC, 200)
	if err != nil || len(rows) != 6 {
		t.Fatalf("chat rows: %d, %v", len(rows), err)
	}
	for _, e := range rows {
		var want *string
		if i := e.RequestID[1] - '0'; i < 4 {
			want = mixed[i].ChatID
		}
		if (e.ChatID == nil) != (want == nil) || (want != nil && *e.ChatID != *want) {
			t.Errorf("row %s: chat %v, want %v", e.RequestID, e.ChatID, want)
		}
	}
	usage, err := db.UsageByKey(ctx, pool, wsC, "chat", time.Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	per := map[string]int64{}
	for _, u := range usage {
		per[u.Key] = u.Calls
	}
	if len(per) != 3 || per[chat1] != 3 || per[chat2] != 1 || per["none"] != 2 {
		t.Errorf("usage per chat: %v", per)
	}
	if _, err := db.UsageByKey(ctx, pool, wsC, "chats", time.Now().Add(-time.Hour)); apperr.CodeOf(err) != apperr.Validation {
		t.Errorf("unknown grouping: %v", err)
	}

	// The largest batch fits one statement.
	if err := db.AuditEventInsert(ctx, pool, auditRows(wsA, db.AuditEventBatchMax, "builtin")...); err != nil {
		t.Fatalf("batch of AuditEventBatchMax rows: %v", err)
	}
}

// TestAuditEventOutcome: a row's outcome is written and read back (empty is ok, or denied
// for kind denied); rows from before migration 00046 (outcome NULL) read back as denied by
// their kind, else ok; UsageByKey counts every outcome but ok as an error; an outcome the
// column's CHECK does not know fails the batch with VALIDATION_ERROR and writes nothing.
func TestAuditEventOutcome(t *testing.T) {
	t.Parallel()
	pool, _ := dbtest.Fresh(t)
	ctx := t.Context()
	const ws = "aaaaaaaa-0000-4000-8000-0000000000e1"
	if err := db.WorkspaceUpsert(ctx, pool, ws, ws); err != nil {
		t.Fatal(err)
	}
	outcomes := []string{"", "ok", "tool_error", "rpc_error", "timeout", "unavailable", "upstream_error", ""}
	rows := auditRows(ws, len(outcomes), "proxied")
	for i, o := range outcomes {
		rows[i].Outcome, rows[i].Tool = o, "t"
	}
	rows[len(rows)-1].Kind = "denied"
	if err := db.AuditEventInsert(ctx, pool, rows...); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"proxied", "denied"} { // written before 00046: no outcome
		if _, err := pool.Exec(ctx, `INSERT INTO audit_events (request_id, principal, workspace_id, tool, kind, duration_ms, args_digest)
			VALUES ('old-'||$2, 'p', $1, 'old', $2, 1, 'd')`, ws, kind); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]string{"r0": "ok", "r1": "ok", "r2": "tool_error", "r3": "rpc_error", "r4": "timeout",
		"r5": "unavailable", "r6": "upstream_error", "r7": "denied", "old-proxied": "ok", "old-denied": "denied"}
	l, err := db.AuditEventList(ctx, pool, ws, 200)
	if err != nil || len(l) != len(want) {
		t.Fatalf("rows: %d, %v", len(l), err)
	}
	for _, e := range l {
		if e.Outcome != want[e.RequestID] {
			t.Errorf("row %s: outcome %q, want %q", e.RequestID, e.Outcome, want[e.RequestID])
		}
	}
	usage, err := db.UsageByKey(ctx, pool, ws, "tool", time.Now().Add(-time.Hour))
	if err != nil || len(usage) != 1 || usage[0].Key != "t" || usage[0].Calls != 8 || usage[0].Errors != 6 {
		t.Errorf("usage: %+v, %v; want t: 8 calls, 6 errors", usage, err)
	}
	bad := auditRows(ws, 2, "proxied")
	bad[1].Outcome = "failed"
	if err := db.AuditEventInsert(ctx, pool, bad...); apperr.CodeOf(err) != apperr.Validation {
		t.Errorf("unknown outcome: %v, want VALIDATION_ERROR", err)
	}
	if l, _ := db.AuditEventList(ctx, pool, ws, 200); len(l) != len(want) {
		t.Errorf("after the refused batch: %d rows, want %d", len(l), len(want))
	}
}

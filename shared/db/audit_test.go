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

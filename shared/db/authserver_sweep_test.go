package db_test

import (
	"testing"

	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/dbtest"
)

const wsSweep = "dddddddd-0000-4000-8000-0000000000a5"

// TestASSweep: expired token rows, dead grants and never-used old registrations go, at
// most limit of each per call; live ones stay, and a swept grant is inactive.
func TestASSweep(t *testing.T) {
	t.Parallel()
	pool, _ := dbtest.Fresh(t)
	ctx := t.Context()
	mustWorkspace(t, pool, wsSweep)
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := pool.Exec(ctx, sql, args...); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	client := func(id, age string) {
		exec(`INSERT INTO as_clients (client_id, redirect_uris, metadata, created_at) VALUES ($1, '{http://127.0.0.1/cb}', '{}', now() - $2::interval)`, id, age)
	}
	grant := func(id, client, lastUsed string, revoked *string) {
		exec(`INSERT INTO as_grants (id, client_id, person_id, workspace_id, last_used_at, revoked_at)
			VALUES ($1, $2, 'p', $3, now() - $4::interval, now() - $5::interval)`, id, client, wsSweep, lastUsed, revoked)
	}
	token := func(sig, kind, req, expiresIn string) {
		exec(`INSERT INTO as_tokens (signature, kind, request_id, request, expires_at) VALUES ($1, $2, $3, '{}', now() + $4::interval)`, sig, kind, req, expiresIn)
	}
	day2 := "2 days"
	client("old-unused-1", "40 days")
	client("old-unused-2", "40 days")
	client("old-used", "40 days")
	client("new-unused", "1 day")
	grant("live", "old-used", "1 hour", nil)           // a live refresh token: stays
	grant("revoked-dead", "old-used", "1 hour", &day2) // revoked 2 days ago, tokens expired: goes
	grant("idle-dead", "old-used", "40 days", nil)     // unused 40 days, no live token: goes
	grant("revoked-live", "old-used", "1 hour", &day2) // revoked, its refresh row not yet expired: stays
	token("t-live", "refresh", "live", "29 days")
	token("t-rl", "refresh", "revoked-live", "10 days")
	token("t-exp1", "access", "revoked-dead", "-3 days")
	token("t-exp2", "code", "idle-dead", "-2 days")
	token("t-exp3", "refresh", "idle-dead", "-5 days")
	token("t-recent", "access", "live", "-1 hour") // expired an hour ago: kept a day

	got, err := db.ASSweep(ctx, pool, 2)
	if err != nil {
		t.Fatal(err)
	}
	// The limit holds: 2 of the 3 old token rows, so idle-dead or revoked-dead may still
	// have an expired row; a second call finishes.
	if got.Tokens != 2 {
		t.Errorf("first sweep deleted %d token rows, want 2 (the limit)", got.Tokens)
	}
	total := got
	for range 3 {
		n, err := db.ASSweep(ctx, pool, 2)
		if err != nil {
			t.Fatal(err)
		}
		total.Tokens, total.Grants, total.Clients = total.Tokens+n.Tokens, total.Grants+n.Grants, total.Clients+n.Clients
	}
	if total != (db.ASSwept{Tokens: 3, Grants: 2, Clients: 2}) {
		t.Errorf("swept %+v, want 3 tokens, 2 grants, 2 clients", total)
	}
	var left []string
	rows, _ := pool.Query(ctx, `SELECT 'token:' || signature FROM as_tokens UNION ALL SELECT 'grant:' || id FROM as_grants
		UNION ALL SELECT 'client:' || client_id FROM as_clients ORDER BY 1`)
	for rows.Next() {
		var s string
		_ = rows.Scan(&s)
		left = append(left, s)
	}
	rows.Close()
	want := []string{"client:new-unused", "client:old-used", "grant:live", "grant:revoked-live", "token:t-live", "token:t-recent", "token:t-rl"}
	if len(left) != len(want) {
		t.Fatalf("left %v, want %v", left, want)
	}
	for i := range want {
		if left[i] != want[i] {
			t.Fatalf("left %v, want %v", left, want)
		}
	}
	if ok, err := db.ASGrantActive(ctx, pool, "idle-dead"); err != nil || ok {
		t.Errorf("a swept grant is active: %v, %v", ok, err)
	}
}

// TestASSweepMCPTokens: an MCP access token's grant (expires_at set, no stored token, not
// "used" by its calls) stays while it is live however long ago it was made, and goes a day
// after its expiry; ASGrantActive refuses it once expired.
func TestASSweepMCPTokens(t *testing.T) {
	t.Parallel()
	pool, _ := dbtest.Fresh(t)
	ctx := t.Context()
	const ws = "dddddddd-0000-4000-8000-0000000000a6"
	mustWorkspace(t, pool, ws)
	tok := func(id, made, expiresIn string) {
		t.Helper()
		if _, err := pool.Exec(ctx, `INSERT INTO as_grants (id, client_id, person_id, workspace_id, created_at, last_used_at, expires_at, role)
			VALUES ($1, $2, 'p', $3, now() - $4::interval, now() - $4::interval, now() + $5::interval, 'member')`,
			id, db.MCPTokenClientID, ws, made, expiresIn); err != nil {
			t.Fatal(err)
		}
	}
	tok("live-old", "80 days", "10 days")     // made 80 days ago, 10 days left: stays, active
	tok("just-expired", "30 days", "-1 hour") // expired an hour ago: stays a day, inactive
	tok("long-expired", "95 days", "-5 days") // goes
	if _, err := db.ASSweep(ctx, pool, 100); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string][2]bool{"live-old": {true, true}, "just-expired": {true, false}, "long-expired": {false, false}} {
		_, err := db.ASGrantGet(ctx, pool, id)
		active, aerr := db.ASGrantActive(ctx, pool, id)
		if (err == nil) != want[0] || aerr != nil || active != want[1] {
			t.Errorf("%s: kept %v (%v), active %v (%v); want kept %v, active %v", id, err == nil, err, active, aerr, want[0], want[1])
		}
	}
}

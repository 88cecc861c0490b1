package testpeer_test

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/testpeer"
	"github.com/jackc/pgx/v5"
)

func testDB(t *testing.T) string {
	t.Helper()
	u := os.Getenv("TEST_DATABASE_URL")
	if u == "" {
		if os.Getenv("REQUIRE_DB") == "1" {
			t.Fatal("REQUIRE_DB=1 but TEST_DATABASE_URL is not set")
		}
		t.Skip("TEST_DATABASE_URL not set")
	}
	return u
}

// TestPgWireFlagsSessionState: the inspector records pgx's default mode (named prepared
// statements), a session SET and a session advisory lock, and lets the pool of db.Open
// (cache-describe), SET LOCAL and a transaction-scoped advisory lock through.
func TestPgWireFlagsSessionState(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	w := testpeer.NewPgWire(t, testDB(t))

	pool, err := db.Open(ctx, w.URL, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var n int
	for range 3 {
		if err := pool.QueryRow(ctx, `SELECT $1::int + 1`, 41).Scan(&n); err != nil || n != 42 {
			t.Fatalf("query: %d %v", n, err)
		}
	}
	if _, err := pool.Exec(ctx, `SELECT $1::jsonb`, []byte(`{"a":1}`)); err != nil {
		t.Fatalf("jsonb []byte argument: %v", err)
	}
	err = db.InTx(ctx, pool, func(tx db.Tx) error {
		if _, err := tx.Exec(ctx, `SET LOCAL statement_timeout = '5s'`); err != nil {
			return err
		}
		return db.LockKey(ctx, tx, "pgwire", "test")
	})
	if err != nil {
		t.Fatal(err)
	}
	if v := w.Violations(); len(v) != 0 || w.Statements() == 0 {
		t.Fatalf("db.Open's pool: %d statements, violations %v; want none", w.Statements(), v)
	}

	conn, err := pgx.Connect(ctx, w.URL) // pgx's default: cached named prepared statements
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if err := conn.QueryRow(ctx, `SELECT $1::int`, 1).Scan(&n); err != nil {
		t.Fatal(err)
	}
	for _, sql := range []string{`SET application_name = 'x'`, `SELECT pg_advisory_lock(1)`, `SELECT pg_advisory_unlock(1)`} {
		if _, err := conn.Exec(ctx, sql, pgx.QueryExecModeSimpleProtocol); err != nil {
			t.Fatal(err)
		}
	}
	v := strings.Join(w.Violations(), "\n")
	for _, want := range []string{"named prepared statement", "session state: SET application_name", "session state: SELECT pg_advisory_lock(1)"} {
		if !strings.Contains(v, want) {
			t.Errorf("violations %q lack %q", v, want)
		}
	}
}

// TestPgBouncerTransactionMode: db.Open's pool works through PgBouncer in transaction mode
// under concurrency (more clients than server connections), jsonb []byte arguments included.
func TestPgBouncerTransactionMode(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	u := testpeer.PgBouncer(t, testDB(t))
	pool, err := db.Open(ctx, u, 16)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 64 {
		wg.Go(func() {
			var n int
			if err := pool.QueryRow(ctx, `SELECT $1::int + length($2::jsonb::text)`, i, []byte(`{}`)).Scan(&n); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("through PgBouncer: %v", err)
	}
}

// Package dbtest gives tests a real Postgres (docs/TESTING.md): `make test` starts a
// throwaway cluster and sets TEST_DATABASE_URL and REQUIRE_DB=1. Without them a DB test
// skips with a message (so an editor's test run still works); with REQUIRE_DB=1 a missing
// database is a failure.
//
// Fresh gives each test its own database, cloned from a migrated template (named after a
// hash of the migrations, built once under an advisory lock), so tests that commit never
// see each other's rows and may run in parallel across packages.
package dbtest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/gateway/migrations"
	"github.com/agentpack/gateway/shared/db"
	"github.com/jackc/pgx/v5"
)

// BaseURL returns TEST_DATABASE_URL, or skips t (fails it when REQUIRE_DB=1).
func BaseURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv("TEST_DATABASE_URL")
	if u == "" {
		if os.Getenv("REQUIRE_DB") == "1" {
			t.Fatal("dbtest: REQUIRE_DB=1 but TEST_DATABASE_URL is not set")
		}
		t.Skip("dbtest: TEST_DATABASE_URL not set; run `make test` for the database tests")
	}
	return u
}

// Empty creates a new database for t with no schema at all (a fresh deploy's database, for
// the migration function's tests), returns a pool on it and its URL, and drops it when t
// ends.
func Empty(t testing.TB) (*db.Pool, string) {
	t.Helper()
	base := BaseURL(t)
	ctx := context.Background()
	name := fmt.Sprintf("e_%d_%s", time.Now().UnixNano(), randHex(4))
	admin := connect(t, base)
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, `CREATE DATABASE `+name); err != nil {
		t.Fatalf("dbtest: create database: %v", err)
	}
	return openDropped(t, base, name, 4)
}

// Fresh creates a new migrated database for t, returns a pool on it and its URL, and
// drops it when t ends.
func Fresh(t testing.TB) (*db.Pool, string) {
	t.Helper()
	base := BaseURL(t)
	ctx := context.Background()
	tmpl := ensureTemplate(t, base)
	name := fmt.Sprintf("t_%d_%s", time.Now().UnixNano(), randHex(4))
	admin := connect(t, base)
	defer admin.Close(ctx)
	var err error
	for i := 0; i < 20; i++ { // the template may be busy for a moment while another clone runs
		if _, err = admin.Exec(ctx, `CREATE DATABASE `+name+` TEMPLATE `+tmpl); err == nil {
			break
		}
		time.Sleep(time.Duration(50*(i+1)) * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("dbtest: create database: %v", err)
	}
	return openDropped(t, base, name, 10)
}

// openDropped opens a pool of at most conns connections on database name of the server at
// base and drops the database (and closes the pool) when t ends.
func openDropped(t testing.TB, base, name string, conns int32) (*db.Pool, string) {
	t.Helper()
	ctx := context.Background()
	u := withDB(t, base, name)
	pool, err := db.Open(ctx, u, conns)
	if err != nil {
		t.Fatalf("dbtest: open: %v", err)
	}
	t.Cleanup(func() {
		pool.Close()
		c := connect(t, base)
		defer c.Close(ctx)
		_, _ = c.Exec(ctx, `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`)
	})
	return pool, u
}

func ensureTemplate(t testing.TB, base string) string {
	t.Helper()
	ctx := context.Background()
	name := "tmpl_" + migrationsHash()
	c := connect(t, base)
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, `SELECT pg_advisory_lock(727274)`); err != nil {
		t.Fatalf("dbtest: lock: %v", err)
	}
	defer c.Exec(ctx, `SELECT pg_advisory_unlock(727274)`)
	var exists bool
	if err := c.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	if exists {
		return name
	}
	// A run killed between CREATE and RENAME leaves name_build behind; without this drop
	// every later run on the same cluster would fail with "already exists".
	if _, err := c.Exec(ctx, `DROP DATABASE IF EXISTS `+name+`_build WITH (FORCE)`); err != nil {
		t.Fatalf("dbtest: drop stale template build: %v", err)
	}
	if _, err := c.Exec(ctx, `CREATE DATABASE `+name+`_build`); err != nil {
		t.Fatalf("dbtest: create template: %v", err)
	}
	pool, err := db.Open(ctx, withDB(t, base, name+"_build"), 2)
	if err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	if err := db.Migrate(ctx, pool); err != nil {
		pool.Close()
		t.Fatalf("dbtest: migrate: %v", err)
	}
	pool.Close()
	if _, err := c.Exec(ctx, `ALTER DATABASE `+name+`_build RENAME TO `+name); err != nil {
		t.Fatalf("dbtest: rename template: %v", err)
	}
	return name
}

func connect(t testing.TB, u string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), u)
	if err != nil {
		t.Fatalf("dbtest: connect: %v", err)
	}
	return c
}

func withDB(t testing.TB, base, name string) string {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("dbtest: TEST_DATABASE_URL: %v", err)
	}
	u.Path = "/" + name
	return u.String()
}

func migrationsHash() string {
	h := sha256.New()
	_ = fs.WalkDir(migrations.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".sql") {
			b, _ := fs.ReadFile(migrations.FS, p)
			h.Write([]byte(p))
			h.Write(b)
		}
		return nil
	})
	return hex.EncodeToString(h.Sum(nil))[:12]
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

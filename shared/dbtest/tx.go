package dbtest

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/agentpack/gateway/shared/db"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// The shared database of Tx: one per test process, cloned from the migrated template and
// never written to for good (every Tx rolls back), so it needs no cleanup between tests.
var shared struct {
	once sync.Once
	pool *db.Pool
	err  error
}

// Tx returns a transaction on a migrated database shared by the tests of this process,
// rolled back when t ends (river's riverdbtest.TestTx does the same). It is for tests that
// read, or write only to look at their own writes: nothing survives the test, and tests
// see each other's rows only if they commit, which they cannot. Much cheaper than Fresh
// (no CREATE DATABASE per test). A test that needs a db.Tx (InTx's), a pool, or committed
// rows uses Fresh.
func Tx(t testing.TB) db.Querier {
	t.Helper()
	base := BaseURL(t)
	shared.once.Do(func() {
		ctx := context.Background()
		tmpl := ensureTemplate(t, base)
		name := fmt.Sprintf("shared_%s_%s", tmpl[len("tmpl_"):], randHex(4))
		admin := connect(t, base)
		defer admin.Close(ctx)
		// Earlier processes' shared databases: dropped unless still in use (no FORCE, so
		// a running process keeps its own), so a long-lived cluster does not collect them.
		if rows, err := admin.Query(ctx, `SELECT datname FROM pg_database WHERE datname LIKE 'shared\_%'`); err == nil {
			stale, _ := pgx.CollectRows(rows, pgx.RowTo[string])
			for _, d := range stale {
				_, _ = admin.Exec(ctx, `DROP DATABASE IF EXISTS `+pgx.Identifier{d}.Sanitize())
			}
		}
		if _, err := admin.Exec(ctx, `CREATE DATABASE `+name+` TEMPLATE `+tmpl); err != nil {
			shared.err = fmt.Errorf("create shared database: %w", err)
			return
		}
		shared.pool, shared.err = db.Open(ctx, withDB(t, base, name), 10)
	})
	if shared.err != nil {
		t.Fatalf("dbtest: %v", shared.err)
	}
	tx, err := shared.pool.Begin(context.Background())
	if err != nil {
		t.Fatalf("dbtest: begin: %v", err)
	}
	t.Cleanup(func() {
		if err := tx.Rollback(context.Background()); err != nil && err != pgx.ErrTxClosed {
			t.Errorf("dbtest: rollback: %v", err)
		}
	})
	return tx
}

// WorkspaceOpts configures Workspace. The zero value is a workspace named "Workspace".
type WorkspaceOpts struct {
	ID   string // "" = a random UUID
	Name string // "" = "Workspace"
}

// Workspace inserts a workspace and returns its id.
func Workspace(t testing.TB, q db.Querier, o WorkspaceOpts) string {
	t.Helper()
	if o.ID == "" {
		o.ID = uuid.NewString()
	}
	if o.Name == "" {
		o.Name = "Workspace"
	}
	if err := db.WorkspaceUpsert(context.Background(), q, o.ID, o.Name); err != nil {
		t.Fatalf("dbtest: workspace: %v", err)
	}
	return o.ID
}

// ConnectionOpts configures Connection. Zero fields get defaults: name "Conn <random>" (so
// parallel transactions do not wait on each other's uncommitted handle), URL
// http://127.0.0.1:1/mcp, streamable-http, enabled, manual, created by "dbtest". A nil
// WorkspaceID makes a global connection.
type ConnectionOpts struct {
	Name           string
	URL            string
	TransportType  string
	Headers        map[string]string
	Disabled       bool
	CatalogEntryID *string
	WorkspaceID    *string
	ProjectID      *string
}

// Connection inserts a connection through db.ConnectionCreate (so its handle follows the
// real rule) and returns it.
func Connection(t testing.TB, q db.Querier, o ConnectionOpts) *db.Connection {
	t.Helper()
	n := &db.ConnectionNew{Name: o.Name, URL: o.URL, TransportType: o.TransportType, Headers: o.Headers,
		Enabled: !o.Disabled, Source: "manual", CatalogEntryID: o.CatalogEntryID, WorkspaceID: o.WorkspaceID,
		ProjectID: o.ProjectID, CreatedBy: "dbtest"}
	if n.Name == "" {
		n.Name = "Conn " + randHex(3)
	}
	if n.URL == "" {
		n.URL = "http://127.0.0.1:1/mcp"
	}
	if n.TransportType == "" {
		n.TransportType = "streamable-http"
	}
	if o.CatalogEntryID != nil {
		n.Source = "marketplace"
	}
	c, err := db.ConnectionCreate(context.Background(), q, n)
	if err != nil {
		t.Fatalf("dbtest: connection: %v", err)
	}
	return c
}

// CatalogEntryOpts configures CatalogEntry. Zero fields get defaults: a unique name
// ("Entry <random>"), URL https://mcp.example.com/mcp, streamable-http.
type CatalogEntryOpts struct {
	Name          string
	URL           string
	TransportType string
	Headers       map[string]string
	Description   string
	Category      string
}

// CatalogEntry inserts a catalog entry through db.CatalogEntryCreate and returns it.
func CatalogEntry(t testing.TB, q db.Querier, o CatalogEntryOpts) *db.CatalogEntry {
	t.Helper()
	if o.Name == "" {
		o.Name = "Entry " + randHex(4)
	}
	if o.URL == "" {
		o.URL = "https://mcp.example.com/mcp"
	}
	if o.TransportType == "" {
		o.TransportType = "streamable-http"
	}
	in := &db.CatalogEntryInput{Name: &o.Name, URL: &o.URL, TransportType: &o.TransportType, Headers: o.Headers}
	if o.Description != "" {
		in.Description = &o.Description
	}
	if o.Category != "" {
		in.Category = &o.Category
	}
	e, err := db.CatalogEntryCreate(context.Background(), q, in)
	if err != nil {
		t.Fatalf("dbtest: catalog entry: %v", err)
	}
	return e
}

// ChatOpts configures Chat. Title "" = "Chat".
type ChatOpts struct {
	WorkspaceID string // required
	Title       string
}

// Chat inserts a chat and returns it.
func Chat(t testing.TB, q db.Querier, o ChatOpts) *db.Chat {
	t.Helper()
	if o.Title == "" {
		o.Title = "Chat"
	}
	c, err := db.ChatCreate(context.Background(), q, o.WorkspaceID, o.Title)
	if err != nil {
		t.Fatalf("dbtest: chat: %v", err)
	}
	return c
}

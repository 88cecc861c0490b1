package dbtest_test

import (
	"context"
	"testing"

	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/dbtest"
)

// TestTx: rows written in one Tx are visible inside it and gone from the next, so tests
// sharing the database never see each other; the factories write rows the queries read back.
func TestTx(t *testing.T) {
	ctx := context.Background()
	var ws string
	t.Run("writes", func(t *testing.T) {
		q := dbtest.Tx(t)
		ws = dbtest.Workspace(t, q, dbtest.WorkspaceOpts{Name: "Tx"})
		e := dbtest.CatalogEntry(t, q, dbtest.CatalogEntryOpts{Category: "dev"})
		c := dbtest.Connection(t, q, dbtest.ConnectionOpts{Name: "Tx Conn", WorkspaceID: &ws, CatalogEntryID: &e.ID})
		chat := dbtest.Chat(t, q, dbtest.ChatOpts{WorkspaceID: ws})
		if got, err := db.ConnectionGet(ctx, q, c.ID); err != nil || got.Name != "Tx Conn" || got.Source != "marketplace" || !got.Enabled {
			t.Fatalf("connection read back: %+v, %v", got, err)
		}
		if chat.Title != "Chat" || chat.WorkspaceID != ws {
			t.Fatalf("chat: %+v", chat)
		}
	})
	t.Run("rolled back", func(t *testing.T) {
		q := dbtest.Tx(t)
		if _, err := db.WorkspaceGet(ctx, q, ws); err == nil {
			t.Fatalf("workspace %s survived its test's transaction", ws)
		}
	})
}

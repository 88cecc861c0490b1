package db_test

import (
	"errors"
	"testing"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/dbtest"
)

// TestInTx: a nil callback commits, an error or a panic rolls back, and the callback's
// error comes back unchanged.
func TestInTx(t *testing.T) {
	t.Parallel()
	pool, _ := dbtest.Fresh(t)
	ctx := t.Context()
	const wsB = "bbbbbbbb-0000-4000-8000-000000000002"
	const wsC = "cccccccc-0000-4000-8000-000000000003"

	if err := db.InTx(ctx, pool, func(tx db.Tx) error { return db.WorkspaceUpsert(ctx, tx, wsA, "committed") }); err != nil {
		t.Fatal(err)
	}
	if _, err := db.WorkspaceGet(ctx, pool, wsA); err != nil {
		t.Fatalf("committed workspace: %v", err)
	}

	boom := errors.New("boom")
	err := db.InTx(ctx, pool, func(tx db.Tx) error {
		if err := db.WorkspaceUpsert(ctx, tx, wsB, "rolled back"); err != nil {
			return err
		}
		return boom
	})
	if err != boom {
		t.Fatalf("InTx error = %v, want the callback's own", err)
	}
	if _, err := db.WorkspaceGet(ctx, pool, wsB); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("workspace of a failed transaction: err = %v, want NOT_FOUND", err)
	}

	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("InTx swallowed the panic")
			}
		}()
		_ = db.InTx(ctx, pool, func(tx db.Tx) error {
			if err := db.WorkspaceUpsert(ctx, tx, wsC, "panicked"); err != nil {
				return err
			}
			panic("boom")
		})
	}()
	if _, err := db.WorkspaceGet(ctx, pool, wsC); apperr.CodeOf(err) != apperr.NotFound {
		t.Fatalf("workspace of a panicked transaction: err = %v, want NOT_FOUND", err)
	}
}

// TestInTxBeginFailure: a closed pool cannot begin; InTx reports UNAVAILABLE and does
// not call the callback.
func TestInTxBeginFailure(t *testing.T) {
	t.Parallel()
	_, url := dbtest.Fresh(t)
	pool, err := db.Open(t.Context(), url, 1)
	if err != nil {
		t.Fatal(err)
	}
	pool.Close()
	called := false
	err = db.InTx(t.Context(), pool, func(db.Tx) error { called = true; return nil })
	if apperr.CodeOf(err) != apperr.Unavailable || called {
		t.Fatalf("InTx on a closed pool: err = %v, called = %v; want UNAVAILABLE, not called", err, called)
	}
}

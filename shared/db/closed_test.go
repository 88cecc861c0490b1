package db_test

import (
	"errors"
	"testing"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/dbtest"
	"github.com/jackc/puddle/v2"
)

// TestInterpretClosedPool: a query on a closed pool is UNAVAILABLE (retryable), recognised
// by puddle's sentinel through pgxpool, not by the error's text.
func TestInterpretClosedPool(t *testing.T) {
	_, url := dbtest.Fresh(t)
	pool, err := db.Open(t.Context(), url, 2)
	if err != nil {
		t.Fatal(err)
	}
	pool.Close()
	_, err = pool.Exec(t.Context(), "SELECT 1")
	if !errors.Is(err, puddle.ErrClosedPool) {
		t.Fatalf("closed pool answered %v (%T), not puddle.ErrClosedPool: re-check how pgxpool surfaces it", err, err)
	}
	e := apperr.As(db.Interpret(err))
	if e == nil || e.Code != apperr.Unavailable || !e.Retryable() {
		t.Errorf("Interpret: %v, want UNAVAILABLE", e)
	}
}

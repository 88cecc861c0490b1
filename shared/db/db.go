// Package db is the Postgres access layer (pgx/v5): the pool, the transaction helper,
// the migration step, the one place where driver errors become application errors, and
// the queries, named Noun+Verb (ConnectionGet, CatalogEntryList, ...).
//
// Errors returned by this package are *apperr.Error: no rows → NOT_FOUND, unique
// violation (23505) → CONFLICT, foreign-key violation (23503) → INVALID_REFERENCE,
// connection failures → UNAVAILABLE (retryable) (docs/DESIGN.md §3).
package db

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/agentpack/gateway/migrations"
	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/telemetry"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/jackc/puddle/v2"
	"github.com/pressly/goose/v3"
)

// Querier is what every query function takes: a *Pool or a Tx.
type Querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Pool is the connection pool; it satisfies Querier.
type Pool = pgxpool.Pool

// Tx is an open transaction, as InTx hands it to its callback: a Querier whose statements
// all run in that one transaction. Only InTx makes one (the unexported method keeps a
// *Pool out), so a function that takes a Tx — LockKey, CatalogEntryLock: transaction-scoped
// advisory locks, which outside a transaction would be released at once — cannot be given
// the pool by mistake. Commit and rollback are InTx's.
type Tx interface {
	Querier
	inTx()
}

// tx is InTx's Tx: the driver's transaction with the marker method.
type tx struct{ pgx.Tx }

func (tx) inTx() {}

// QueryExecMode is the pgx query mode of every pool Open makes: cache-describe, one
// Parse/Describe of the unnamed statement per new statement text on a connection, then
// Parse/Bind/Execute of the unnamed statement — never a named prepared statement.
const QueryExecMode = pgx.QueryExecModeCacheDescribe

// Open connects a pool to url with at most maxConns connections (Lambda: 1–2 per
// execution environment; RDS Proxy fans in). It pings once and returns UNAVAILABLE when
// the database cannot be reached within 5 s.
func Open(ctx context.Context, url string, maxConns int32) (*Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("db: parse DATABASE_URL: %w", err)
	}
	if maxConns > 0 {
		cfg.MaxConns = maxConns
	}
	cfg.ConnConfig.ConnectTimeout = 5 * time.Second
	// No named prepared statements (docs/DATABASE.md): cache-describe sends each statement
	// through the unnamed statement, with the parameter and result types described once per
	// connection and cached. RDS Proxy pins a session for good on a named prepared statement,
	// and a transaction-mode pooler (PgBouncer) hands the next transaction another server
	// connection, where a named statement does not exist.
	cfg.ConnConfig.DefaultQueryExecMode = QueryExecMode
	if t := telemetry.PgxTracer(); t != nil { // a span per query when tracing is on
		cfg.ConnConfig.Tracer = t
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("db: open: %w", err)
	}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := pool.Ping(pctx); err != nil {
		pool.Close()
		return nil, Interpret(err)
	}
	return pool, nil
}

// Migrate applies every pending migration of the embedded migrations folder with goose,
// under goose's Postgres advisory lock so that concurrent runs serialise. It is
// idempotent: a second run applies nothing.
func Migrate(ctx context.Context, pool *Pool) error {
	_, err := MigrateFS(ctx, pool, migrations.FS)
	return err
}

// MigrateFS is Migrate with the migrations of fsys (goose's NNNNN_name.sql files at its
// root; migrations.FS in every binary, another set only in tests). It returns the schema
// version after the run. Each migration runs in its own transaction: a failing one is
// rolled back whole, the ones before it stay applied, and the error names its file.
func MigrateFS(ctx context.Context, pool *Pool, fsys fs.FS) (int64, error) {
	sqlDB := stdlib.OpenDBFromPool(pool)
	defer sqlDB.Close()
	provider, err := goose.NewProvider(goose.DialectPostgres, sqlDB, fsys,
		goose.WithSessionLocker(mustLocker()))
	if err != nil {
		return 0, fmt.Errorf("db: migrations: %w", err)
	}
	if _, err := provider.Up(ctx); err != nil {
		var pe *goose.PartialError
		if errors.As(err, &pe) && pe.Failed != nil && pe.Failed.Source != nil {
			applied := "none"
			for i, a := range pe.Applied {
				if i == 0 {
					applied = ""
				} else {
					applied += ", "
				}
				applied += filepath.Base(a.Source.Path)
			}
			return 0, fmt.Errorf("db: migrate: %s failed and was rolled back (applied before it in this run: %s): %w",
				filepath.Base(pe.Failed.Source.Path), applied, pe.Err)
		}
		return 0, fmt.Errorf("db: migrate: %w", err)
	}
	v, err := provider.GetDBVersion(ctx)
	if err != nil {
		return 0, fmt.Errorf("db: migrate: schema version: %w", err)
	}
	return v, nil
}

// InTx runs fn inside a transaction of pool and commits when fn returns nil. It rolls
// back on any error or panic; the rollback uses a fresh context so a cancelled request
// still releases its locks. It returns fn's error unchanged, or a failure to begin or
// commit as an *apperr.Error (Interpret: UNAVAILABLE when the database is unreachable).
// Transactions are opened by services (shared/...), never by HTTP handlers.
func InTx(ctx context.Context, pool *Pool, fn func(Tx) error) (err error) {
	ptx, err := pool.Begin(ctx)
	if err != nil {
		return Interpret(err)
	}
	defer func() {
		if p := recover(); p != nil {
			_ = ptx.Rollback(context.WithoutCancel(ctx))
			panic(p)
		}
		if err != nil {
			_ = ptx.Rollback(context.WithoutCancel(ctx))
		}
	}()
	if err = fn(tx{ptx}); err != nil {
		return err
	}
	return Interpret(ptx.Commit(ctx))
}

// Interpret translates a driver error into an *apperr.Error. It is the only place that
// looks at pgx error types; nil stays nil and an *apperr.Error passes through unchanged.
func Interpret(err error) error {
	if err == nil {
		return nil
	}
	if e := apperr.As(err); e != nil {
		return err
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return apperr.Wrap(err, apperr.NotFound, "not found")
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "23505":
			return apperr.Wrap(err, apperr.Conflict, "already exists")
		case "23503":
			return apperr.Wrap(err, apperr.InvalidReference, "references a row that does not exist")
		case "23514", "22P02", "22001", "23502":
			return apperr.Wrap(err, apperr.Validation, "invalid value")
		case "57P01", "57P02", "57P03", "53300", "08000", "08003", "08006", "08001", "08004":
			return unavailable(err)
		}
		return apperr.Wrap(err, apperr.Internal, "internal error")
	}
	var netErr net.Error
	var connErr *pgconn.ConnectError
	if errors.As(err, &netErr) || errors.As(err, &connErr) || pgconn.SafeToRetry(err) ||
		errors.Is(err, context.DeadlineExceeded) || isClosedPool(err) {
		return unavailable(err)
	}
	return apperr.Wrap(err, apperr.Internal, "internal error")
}

// localCluster is the address (host:port) of the local development cluster the process
// uses (SetLocalCluster); nil when deployed or unknown.
var localCluster atomic.Pointer[string]

// SetLocalCluster tells Interpret that the database is the local development cluster at
// addr (host:port; cmd/local serve sets it when DATABASE_URL names a loopback host and the
// environment is not deployed): an unreachable database is then the UNAVAILABLE "database
// unavailable: the local Postgres at addr is not answering", with the hint to start it
// again, rather than "retry shortly", which no wait cures when `make db-stop` stopped it
// (issue 44). "" forgets it.
func SetLocalCluster(addr string) {
	if addr == "" {
		localCluster.Store(nil)
		return
	}
	localCluster.Store(&addr)
}

// unavailable is the UNAVAILABLE of an unreachable database (Interpret).
func unavailable(err error) error {
	if a := localCluster.Load(); a != nil {
		return apperr.Wrap(err, apperr.Unavailable, "database unavailable: the local Postgres at %s is not answering (stopped?)", *a).
			WithHint("start it again: make db-start, or stop and restart make run (which starts it)")
	}
	return apperr.Wrap(err, apperr.Unavailable, "database unavailable").WithHint("retry shortly")
}

// isClosedPool reports a query on a pool that was closed: pgxpool returns puddle's
// ErrClosedPool from Acquire unwrapped (pgxpool.Pool.Acquire), and a connection closed under
// a query gives net.ErrClosed.
func isClosedPool(err error) bool {
	return errors.Is(err, puddle.ErrClosedPool) || errors.Is(err, net.ErrClosed)
}

// RefusedStatement reports whether err is Postgres refusing a statement (a *pgconn.PgError:
// a value it will not store, a constraint) rather than the database being unreachable,
// shutting down or out of connections (SQLSTATE classes 08, 53 and 57, or no Postgres
// error at all). A caller may retry a refused batch in parts; an unavailable database
// would refuse the parts the same way.
func RefusedStatement(err error) bool {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return false
	}
	class := pgErr.Code[:min(2, len(pgErr.Code))]
	return class != "08" && class != "53" && class != "57"
}

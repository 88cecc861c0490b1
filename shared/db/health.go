package db

import (
	"context"
	"time"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/entryhealth"
)

// Health statuses of catalog entries (docs/DESIGN.md §9a; entryhealth holds the rule).
const (
	HealthHealthy = entryhealth.Healthy
	HealthStale   = entryhealth.Stale
	HealthDown    = entryhealth.Down
)

// HealthDownAfter is entryhealth.DownAfter: the number of consecutive failed runs from
// which an entry is "down"; fewer (1–2) make it "stale" (docs/DESIGN.md §9a).
const HealthDownAfter = entryhealth.DownAfter

// HealthCandidate is one catalog entry the health check probes, and the connection it
// probes it through.
type HealthCandidate struct {
	EntryID         string     `db:"entry_id"`
	EntryName       string     `db:"entry_name"`
	EntryStatus     *string    `db:"entry_health_status"`
	LastHealthCheck *time.Time `db:"entry_last_health_check"`
	Connection
}

// HealthCandidateList returns one candidate per catalog entry that has at least one
// installed, enabled connection (marketplace installs only):
// one check per entry per run. A manual connection that merely links an entry is not a
// probe: its URL and headers are whatever its workspace's admin chose, so probing it
// would let one workspace set the shared entry's health (and last_health_error, shown to
// every workspace) from its own private upstream. The connection chosen is the
// most recently successful one (last_connected_at), then the oldest, so the choice is
// deterministic. Entries never checked come first, then the least recently checked, so
// that a pass cut short by the function timeout reaches the others next time.
func HealthCandidateList(ctx context.Context, q Querier) ([]HealthCandidate, error) {
	return collect[HealthCandidate](ctx, q, `SELECT e.id AS entry_id, e.name AS entry_name,
			e.health_status AS entry_health_status, e.last_health_check AS entry_last_health_check, c.*
		FROM mcp_catalog_entries e
		JOIN LATERAL (SELECT `+connectionCols+` FROM mcp_connections c
			WHERE c.catalog_entry_id = e.id AND c.enabled AND c.source = 'marketplace'
			ORDER BY c.last_connected_at DESC NULLS LAST, c.created_at, c.id LIMIT 1) c ON true
		ORDER BY e.last_health_check ASC NULLS FIRST, e.name`)
}

// HealthState is an entry's health after a check.
type HealthState struct {
	Status              string     `db:"health_status" json:"healthStatus"`
	ConsecutiveFailures int        `db:"consecutive_failures" json:"consecutiveFailures"`
	LastHealthCheck     *time.Time `db:"last_health_check" json:"lastHealthCheck"`
	LastHealthError     *string    `db:"last_health_error" json:"lastHealthError"`
}

// CatalogEntryRecordHealth records one check of entry id at time at and returns the new
// state, as entryhealth.After decides from the stored consecutive_failures: failure is ""
// on success (status healthy, consecutive_failures 0, last_health_error cleared), else
// consecutive_failures + 1, status stale for 1–2 failures and down from HealthDownAfter,
// last_health_error = failure (which must hold no secrets). last_health_check is set
// either way. Only the health columns change (not updated_at, which tracks curated data).
// The write is a compare-and-set on consecutive_failures, retried when another check of
// the same entry got in between, so concurrent checks each count once without a
// transaction (use the pool or a READ COMMITTED transaction: under REPEATABLE READ the
// retry would see the same snapshot). After 8 lost races it gives up with UNAVAILABLE
// (retryable). NOT_FOUND when the entry is gone (or id is malformed).
func CatalogEntryRecordHealth(ctx context.Context, q Querier, id string, at time.Time, failure string) (*HealthState, error) {
	if !IsUUID(id) {
		return nil, notFound()
	}
	for range 8 {
		var before int
		if err := q.QueryRow(ctx, `SELECT consecutive_failures FROM mcp_catalog_entries WHERE id = $1`, id).Scan(&before); err != nil {
			return nil, Interpret(err)
		}
		next := entryhealth.After(before, failure)
		st, err := one[HealthState](ctx, q, `UPDATE mcp_catalog_entries SET health_status = $3,
				consecutive_failures = $4, last_health_check = $5, last_health_error = NULLIF($6, '')
			WHERE id = $1 AND consecutive_failures = $2
			RETURNING health_status, consecutive_failures, last_health_check, last_health_error`,
			id, before, next.Status, next.ConsecutiveFailures, at, next.LastError)
		if apperr.CodeOf(err) == apperr.NotFound {
			continue // another check changed the count (or the entry is gone: the SELECT says)
		}
		return st, err
	}
	return nil, apperr.New(apperr.Unavailable, "catalog entry health: too many concurrent checks")
}

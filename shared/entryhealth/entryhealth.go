// Package entryhealth is the health state machine of a catalog entry (docs/DESIGN.md §9a)
// as a pure function: what one health-check result does to the entry's status and
// consecutive-failure count. It depends on nothing, so the storage package (shared/db)
// applies it and the health check (functions/healthcheck/health) reports with its
// statuses.
package entryhealth

// Health statuses of a catalog entry (docs/DESIGN.md §9a). An entry never checked has no
// status. Stale and down entries stay listed and installable.
const (
	Healthy = "healthy" // the last check succeeded
	Stale   = "stale"   // 1 to DownAfter-1 checks in a row failed
	Down    = "down"    // DownAfter or more checks in a row failed
)

// DownAfter is the number of consecutive failed checks from which an entry is Down;
// fewer make it Stale (docs/DESIGN.md §9a).
const DownAfter = 3

// State is an entry's health after a check.
type State struct {
	Status              string // Healthy, Stale or Down
	ConsecutiveFailures int    // failed checks in a row, 0 after a success
	LastError           string // the failure text; "" after a success (the stored error is cleared)
}

// After is the entry's state after one check, given consecutiveFailures before it (a
// negative count is taken as 0) and failure, the check's client-safe error text ("" on
// success): success → Healthy, 0 failures, no error; failure → failures + 1, Stale below
// DownAfter and Down from it, LastError = failure.
func After(consecutiveFailures int, failure string) State {
	if failure == "" {
		return State{Status: Healthy}
	}
	n := max(consecutiveFailures, 0) + 1
	st := State{Status: Stale, ConsecutiveFailures: n, LastError: failure}
	if n >= DownAfter {
		st.Status = Down
	}
	return st
}

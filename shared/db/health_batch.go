package db

import (
	"context"
	"time"

	"github.com/agentpack/gateway/shared/entryhealth"
)

// HealthWrite is one health check's outcome to record (HealthRecordBatch): the entry's
// health (as CatalogEntryRecordHealth) and the probed connection's state (as
// ConnectionRecordState, capabilities kept).
type HealthWrite struct {
	EntryID      string
	ConnectionID string
	At           time.Time
	// Failure is "" on success, else the client-safe error (no secrets).
	Failure string
	// Transport and ProtocolVersion are what answered, on success.
	Transport, ProtocolVersion string
}

// HealthRecordBatch records ws in one transaction, in a fixed number of statements
// whatever len(ws) (docs/DESIGN.md §9a "At scale": a pass's writes in batches, not one
// round trip each): it locks the entries (FOR UPDATE, in id order, so that concurrent
// batches and CatalogEntryRecordHealth's compare-and-set serialise instead of losing a
// count), applies entryhealth.After to each in order (an entry twice in ws counts twice),
// updates the entries and then the connections. It returns one state per write, in
// order; a write whose entry is gone (or whose id is malformed) gets a nil state and
// writes nothing, while the others are recorded. The error is the transaction's: then
// nothing is written.
func HealthRecordBatch(ctx context.Context, pool *Pool, ws []HealthWrite) ([]*HealthState, error) {
	out := make([]*HealthState, len(ws))
	if len(ws) == 0 {
		return out, nil
	}
	var ids []string
	for _, w := range ws {
		if IsUUID(w.EntryID) {
			ids = append(ids, w.EntryID)
		}
	}
	err := InTx(ctx, pool, func(tx Tx) error {
		rows, err := tx.Query(ctx, `SELECT id::text, consecutive_failures FROM mcp_catalog_entries
			WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE`, ids)
		if err != nil {
			return Interpret(err)
		}
		count := map[string]int{}
		for rows.Next() {
			var id string
			var n int
			if err := rows.Scan(&id, &n); err != nil {
				rows.Close()
				return Interpret(err)
			}
			count[id] = n
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return Interpret(err)
		}
		// The last state of each entry, and each connection's outcome, once each (an
		// UPDATE … FROM applies one source row per target row).
		final := map[string]*HealthState{}
		var order []string
		conns := map[string]HealthWrite{}
		var connOrder []string
		for i, w := range ws {
			before, ok := count[w.EntryID]
			if !IsUUID(w.EntryID) || !ok {
				continue
			}
			next := entryhealth.After(before, w.Failure)
			count[w.EntryID] = next.ConsecutiveFailures
			at := w.At
			st := &HealthState{Status: next.Status, ConsecutiveFailures: next.ConsecutiveFailures, LastHealthCheck: &at}
			if next.LastError != "" {
				e := next.LastError
				st.LastHealthError = &e
			}
			out[i] = st
			if _, seen := final[w.EntryID]; !seen {
				order = append(order, w.EntryID)
			}
			final[w.EntryID] = st
			if IsUUID(w.ConnectionID) {
				if _, seen := conns[w.ConnectionID]; !seen {
					connOrder = append(connOrder, w.ConnectionID)
				}
				conns[w.ConnectionID] = w
			}
		}
		if len(order) == 0 {
			return nil
		}
		var status, errs []string
		var fails []int
		var ats []time.Time
		for _, id := range order {
			st := final[id]
			status, fails, ats = append(status, st.Status), append(fails, st.ConsecutiveFailures), append(ats, *st.LastHealthCheck)
			e := ""
			if st.LastHealthError != nil {
				e = *st.LastHealthError
			}
			errs = append(errs, e)
		}
		if _, err := tx.Exec(ctx, `UPDATE mcp_catalog_entries e SET health_status = u.status,
				consecutive_failures = u.n, last_health_check = u.at, last_health_error = NULLIF(u.err, '')
			FROM unnest($1::uuid[], $2::text[], $3::int[], $4::timestamptz[], $5::text[]) AS u(id, status, n, at, err)
			WHERE e.id = u.id`, order, status, fails, ats, errs); err != nil {
			return Interpret(err)
		}
		var ok []bool
		var cerrs, transports, versions []string
		for _, id := range connOrder {
			w := conns[id]
			ok = append(ok, w.Failure == "")
			cerrs, transports, versions = append(cerrs, w.Failure), append(transports, w.Transport), append(versions, w.ProtocolVersion)
		}
		_, err = tx.Exec(ctx, `UPDATE mcp_connections c SET
				last_connected_at = CASE WHEN u.ok THEN now() ELSE c.last_connected_at END,
				last_error = CASE WHEN u.ok THEN NULL ELSE u.err END,
				working_transport = CASE WHEN u.ok THEN NULLIF(u.transport, '') ELSE c.working_transport END,
				protocol_version = CASE WHEN u.ok THEN NULLIF(u.version, '') ELSE c.protocol_version END
			FROM unnest($1::uuid[], $2::bool[], $3::text[], $4::text[], $5::text[]) AS u(id, ok, err, transport, version)
			WHERE c.id = u.id`, connOrder, ok, cerrs, transports, versions)
		return Interpret(err)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

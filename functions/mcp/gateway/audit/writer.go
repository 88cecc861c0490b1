package audit

import (
	"context"
	"time"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/db"
)

// The writer goroutine of a Trail: it waits out the linger, writes queued rows in batches,
// retries failed batches with backoff, and logs the rows it loses (see the package doc).

// signal sends on ch (kick or wake) unless a signal is already pending.
func (w *Trail) signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// lingerFor is how long the writer should still wait before writing the queue (0: now):
// the rest of the oldest row's Linger, unless a full batch waits, the trail is closed, or
// a Flush, Drain or Close waits. w.mu is held.
func (w *Trail) lingerFor() time.Duration {
	if w.linger <= 0 || len(w.queue) >= maxBatch || w.closed || w.waiters > 0 {
		return 0
	}
	// OccurredAt is wall time (UTC has no monotonic reading): a clock step is clamped.
	return min(w.linger, max(0, w.linger-time.Since(w.queue[0].OccurredAt)))
}

// notify wakes the waiters of Flush and Drain; w.mu is held.
func (w *Trail) notify() {
	close(w.changed)
	w.changed = make(chan struct{})
}

// run is the writer: it writes batches until the queue is empty, retrying failed ones.
func (w *Trail) run() {
	backoff := RetryMin
	for {
		w.mu.Lock()
		if len(w.queue) == 0 || (w.closed && w.failing) {
			// Closed with the database failing: what is left cannot be written.
			left := w.queue
			w.queue = nil
			w.running = false
			w.notify()
			w.mu.Unlock()
			if len(left) > 0 {
				w.lose(left, "process stopping: the database is unreachable")
			}
			return
		}
		if d := w.lingerFor(); d > 0 && !w.failing {
			// A pending wake is stale: what it signalled (a full batch, a waiter) is what
			// lingerFor has just ruled out under w.mu; one sent from now on is fresh.
			select {
			case <-w.wake:
			default:
			}
			w.mu.Unlock()
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-w.wake:
				t.Stop()
			}
			continue
		}
		n := min(len(w.queue), maxBatch)
		batch := w.queue[:n:n]
		w.queue = w.queue[n:]
		if len(w.queue) == 0 {
			w.queue = nil
		}
		w.inflight = n
		w.mu.Unlock()

		retry, written := w.write(batch)

		w.mu.Lock()
		w.inflight = 0
		w.stats.Written += int64(written)
		if len(retry) > 0 {
			w.stats.Retries++
			w.failing = true
			w.queue = append(retry, w.queue...)
		} else {
			w.stats.Batches++
			w.failing = false
			backoff = RetryMin
		}
		w.notify()
		closed := w.closed
		w.mu.Unlock()
		if len(retry) == 0 {
			continue
		}
		if closed {
			continue // Close is waiting: no backoff, the loop ends on failing
		}
		w.log.Warn("audit batch not written; retrying", "rows", len(retry), "retry_in_ms", backoff.Milliseconds())
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-w.kick:
			t.Stop()
		}
		backoff = min(2*backoff, RetryMax)
	}
}

// write inserts batch and returns the rows to retry and how many were written. Rows the
// database refuses are lost (logged); a retryable failure returns every unwritten row.
func (w *Trail) write(batch []*db.AuditEvent) (retry []*db.AuditEvent, written int) {
	ctx, cancel := context.WithTimeout(w.writes, batchTimeout)
	defer cancel()
	err := db.AuditEventInsert(ctx, w.pool, batch...)
	if err == nil {
		return nil, len(batch)
	}
	if apperr.CodeOf(err) != apperr.Validation {
		return batch, 0
	}
	// One refused row fails the statement: write them one at a time, losing only it.
	for i, ev := range batch {
		err := db.AuditEventInsert(ctx, w.pool, ev)
		switch {
		case err == nil:
			written++
		case apperr.CodeOf(err) == apperr.Validation:
			w.lose([]*db.AuditEvent{ev}, "refused by the database: "+err.Error())
		default:
			return batch[i:], written
		}
	}
	return nil, written
}

// lose counts evs as lost and logs each by its key with its fields (never arguments).
func (w *Trail) lose(evs []*db.AuditEvent, reason string) {
	w.mu.Lock()
	w.stats.Lost += int64(len(evs))
	w.mu.Unlock()
	for _, ev := range evs {
		ws, conn, chat := "", "", ""
		if ev.WorkspaceID != nil {
			ws = *ev.WorkspaceID
		}
		if ev.ConnectionID != nil {
			conn = *ev.ConnectionID
		}
		if ev.ChatID != nil {
			chat = *ev.ChatID
		}
		w.log.Error("audit row not written", "row_key", ev.RowKey, "reason", reason,
			"occurred_at", ev.OccurredAt.Format(time.RFC3339Nano), "request_id", ev.RequestID,
			"principal", ev.Principal, "workspace_id", ws, "tool", ev.Tool, "version", ev.Version,
			"kind", ev.Kind, "outcome", ev.Outcome, "connection_id", conn, "chat_id", chat, "duration_ms", ev.DurationMS, "args_digest", ev.ArgsDigest)
	}
}

package health

import (
	"context"
	"time"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/db"
)

// recordBatch is the most outcomes one state write carries.
const recordBatch = 100

// recorder batches a pass's state writes (docs/DESIGN.md §9a "At scale"): checks hand
// their outcome to one goroutine, which writes whatever has queued meanwhile (up to
// recordBatch) in one db.HealthRecordBatch — a group commit: a few statements per batch
// instead of five per check, on one pool connection, leaving the other to the tool
// refreshes.
type recorder struct {
	pool *db.Pool
	pass context.Context
	ch   chan recordReq
	done chan struct{}
}

type recordReq struct {
	w     db.HealthWrite
	reply chan recordRes
}

type recordRes struct {
	st  *db.HealthState
	err error
}

// newRecorder starts the writer of a pass whose context is pass; close stops it.
func newRecorder(pass context.Context, pool *db.Pool) *recorder {
	r := &recorder{pool: pool, pass: pass, ch: make(chan recordReq), done: make(chan struct{})}
	go r.loop()
	return r
}

func (r *recorder) loop() {
	defer close(r.done)
	for first := range r.ch {
		batch := []recordReq{first}
	drain:
		for len(batch) < recordBatch {
			select {
			case q, ok := <-r.ch:
				if !ok {
					break drain
				}
				batch = append(batch, q)
			default:
				break drain
			}
		}
		r.flush(batch)
	}
}

// flush writes one batch. The writes must land even when the checks' context is about
// to end (they use the Reserve) or the pass was cancelled, yet never run past the pass's
// own deadline, and take at most 5 s.
func (r *recorder) flush(batch []recordReq) {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(r.pass), 5*time.Second)
	defer cancel()
	if dl, ok := r.pass.Deadline(); ok {
		wctx, cancel = context.WithDeadline(wctx, dl)
		defer cancel()
	}
	r.write(wctx, batch)
}

// write writes batch in one db.HealthRecordBatch and answers each check. When Postgres
// refuses the batch's statements (db.RefusedStatement: not the database being
// unavailable, but a value it will not store, say) and the batch has more than one write,
// each half is written on its own, recursively: the one write it refuses fails alone
// (SkipWriteFailed), after ≈ 2·log2(recordBatch) more transactions, instead of taking up to
// recordBatch−1 good outcomes down with it. A database that is down or unreachable fails
// the batch whole, at once (its halves would fail the same way); every half shares the
// flush's deadline.
func (r *recorder) write(ctx context.Context, batch []recordReq) {
	ws := make([]db.HealthWrite, len(batch))
	for i, q := range batch {
		ws[i] = q.w
	}
	out, err := db.HealthRecordBatch(ctx, r.pool, ws)
	if err != nil && len(batch) > 1 && ctx.Err() == nil && db.RefusedStatement(err) {
		h := len(batch) / 2
		r.write(ctx, batch[:h])
		r.write(ctx, batch[h:])
		return
	}
	for i, q := range batch {
		switch {
		case err != nil:
			q.reply <- recordRes{err: err}
		case out[i] == nil:
			q.reply <- recordRes{err: apperr.New(apperr.NotFound, "catalog entry %s not found", q.w.EntryID)}
		default:
			q.reply <- recordRes{st: out[i]}
		}
	}
}

// record writes w with the next batch and returns the entry's new state.
func (r *recorder) record(w db.HealthWrite) (*db.HealthState, error) {
	reply := make(chan recordRes, 1)
	r.ch <- recordReq{w: w, reply: reply}
	res := <-reply
	return res.st, res.err
}

// close stops the writer once every record has returned (call it after the checks).
func (r *recorder) close() {
	close(r.ch)
	<-r.done
}

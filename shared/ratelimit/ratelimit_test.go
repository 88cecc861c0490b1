package ratelimit_test

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/dbtest"
	"github.com/agentpack/gateway/shared/ratelimit"
	"github.com/google/uuid"
)

// workspace creates a workspace and returns its id.
func workspace(t testing.TB, pool *db.Pool) string {
	t.Helper()
	return dbtest.Workspace(t, pool, dbtest.WorkspaceOpts{Name: "w"})
}

func limit(t testing.TB, pool *db.Pool, l *db.RateLimit) *db.RateLimit {
	t.Helper()
	row, err := db.RateLimitUpsert(context.Background(), pool, l)
	if err != nil {
		t.Fatal(err)
	}
	return row
}

func ptr(n int) *int { return &n }

// TestTakeIsExactUnderConcurrency: 24 concurrent calls against 5 per minute admit at most 5
// per window (exactly 5 when they share a window), and the refusals carry RATE_LIMITED,
// retryable, the window, the limit and a wait of 1–60 s.
func TestTakeIsExactUnderConcurrency(t *testing.T) {
	t.Parallel()
	pool, _ := dbtest.Fresh(t)
	ws := workspace(t, pool)
	row := limit(t, pool, &db.RateLimit{WorkspaceID: ws, PerMinute: ptr(5)})
	l := &ratelimit.Limiter{Pool: pool}
	var wg sync.WaitGroup
	var allowed atomic.Int32
	windows := sync.Map{}
	for range 24 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := l.Take(t.Context(), ratelimit.Call{Workspace: ws, Tool: "mcp_a_b", Principal: "p"})
			if err != nil {
				t.Error(err)
				return
			}
			if d.Windows != 1 {
				t.Errorf("windows %d", d.Windows)
			}
			if d.Allowed {
				allowed.Add(1)
				return
			}
			windows.Store(d.Window.WindowStart, true)
			e := ratelimit.Refusal(d)
			det := e.Details.(ratelimit.RefusalDetails)
			if e.Code != apperr.RateLimited || !e.Retryable() || det.Window != "minute" || det.Limit != 5 ||
				det.LimitID != row.ID || det.RetryAfterSeconds < 1 || det.RetryAfterSeconds > 60 {
				t.Errorf("refusal %+v %+v", e, det)
			}
		}()
	}
	wg.Wait()
	var counts []int
	rows, _ := pool.Query(t.Context(), `SELECT count FROM rate_limit_counters WHERE limit_id = $1`, row.ID)
	for rows.Next() {
		var n int
		_ = rows.Scan(&n)
		counts = append(counts, n)
	}
	rows.Close()
	sum := 0
	for _, n := range counts {
		if n > 5 {
			t.Errorf("a window counted %d", n)
		}
		sum += n
	}
	if int(allowed.Load()) != sum || (len(counts) == 1 && sum != 5) {
		t.Errorf("allowed %d, windows %v", allowed.Load(), counts)
	}
}

// TestTakeGivesBack: a call refused by the minute window gives its day count back, and a
// call no limit applies to is allowed with no window.
func TestTakeGivesBack(t *testing.T) {
	t.Parallel()
	pool, _ := dbtest.Fresh(t)
	ws := workspace(t, pool)
	row := limit(t, pool, &db.RateLimit{WorkspaceID: ws, PerMinute: ptr(2), PerDay: ptr(100), Principal: strp("*")})
	l := &ratelimit.Limiter{Pool: pool}
	allowed := 0
	for range 5 {
		d, err := l.Take(t.Context(), ratelimit.Call{Workspace: ws, Tool: "t", Principal: "alice"})
		if err != nil {
			t.Fatal(err)
		}
		if d.Windows != 2 {
			t.Fatalf("windows %d", d.Windows)
		}
		if d.Allowed {
			allowed++
		} else if d.Window.Kind != "minute" {
			t.Errorf("refused by %s", d.Window.Kind)
		}
	}
	var day int
	if err := pool.QueryRow(t.Context(), `SELECT count FROM rate_limit_counters WHERE limit_id = $1 AND window_kind = 'day' AND subject = 'alice'`, row.ID).Scan(&day); err != nil {
		t.Fatal(err)
	}
	if day != allowed {
		t.Errorf("day counter %d, allowed %d", day, allowed)
	}
	d, err := l.Take(t.Context(), ratelimit.Call{Workspace: workspace(t, pool), Tool: "t", Principal: "alice"})
	if err != nil || !d.Allowed || d.Windows != 0 {
		t.Errorf("no limit: %+v %v", d, err)
	}
}

func strp(s string) *string { return &s }

// TestTakeDatabaseDown: with the database gone, Take fails UNAVAILABLE (the gateway then
// refuses the call: it could not be counted).
func TestTakeDatabaseDown(t *testing.T) {
	t.Parallel()
	pool, _ := dbtest.Fresh(t)
	ws := workspace(t, pool)
	pool.Close()
	_, err := (&ratelimit.Limiter{Pool: pool}).Take(t.Context(), ratelimit.Call{Workspace: ws, Tool: "t", Principal: "p"})
	if apperr.CodeOf(err) != apperr.Unavailable {
		t.Errorf("err %v, want UNAVAILABLE", err)
	}
}

// BenchmarkLimiterTake measures the limiter's cost per proxied call (one statement, one
// round trip to Postgres) with a limit that applies, at 1 and 8 concurrent callers, and
// for a workspace without limits. `make bench` runs it.
func BenchmarkLimiterTake(b *testing.B) {
	pool, url := dbtest.Fresh(b)
	big, err := db.Open(context.Background(), url, 8) // 8 callers need 8 connections
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(big.Close)
	ws := workspace(b, pool)
	limit(b, pool, &db.RateLimit{WorkspaceID: ws, PerMinute: ptr(ratelimit.MaxPerMinute), PerDay: ptr(ratelimit.MaxPerDay), Principal: strp("*")})
	free := workspace(b, pool)
	l := &ratelimit.Limiter{Pool: big}
	for _, bc := range []struct {
		name string
		ws   string
		c    int
	}{{"limited/c=1", ws, 1}, {"limited/c=8", ws, 8}, {"no-limit/c=1", free, 1}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetParallelism((bc.c + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
			var n atomic.Int64
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				// each caller its own subject: per-member buckets, as members calling at once
				sub := uuid.NewString()
				for pb.Next() {
					d, err := l.Take(context.Background(), ratelimit.Call{Workspace: bc.ws, Tool: "mcp_a_b", Principal: sub})
					if err != nil || !d.Allowed {
						b.Errorf("take: %+v %v", d, err)
						return
					}
					n.Add(1)
				}
			})
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(max(n.Load(), 1))*float64(bc.c), "ns/call-per-caller")
		})
	}
}

package health

import (
	"context"

	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/emf"
)

// The pass's one summary log line and one CloudWatch EMF line (the package doc lists
// their fields).

// report writes the pass's one summary log line and one EMF line.
func (c *Checker) report(ctx context.Context, s *Summary) {
	var skipped, failing []string
	for _, r := range s.Results {
		switch r.Status {
		case "skipped":
			skipped = append(skipped, r.EntryName)
		case db.HealthStale, db.HealthDown:
			failing = append(failing, r.EntryName+": "+r.Error)
		}
	}
	c.log.InfoContext(ctx, "health check pass", "checked", s.Checked, "healthy", s.Healthy, "stale", s.Stale,
		"down", s.Down, "skipped", s.Skipped, "duration_ms", s.DurationMS, "skipped_entries", skipped,
		"failing", failing)
	if c.o.Metrics == nil {
		return
	}
	reconcileFailed := 0
	if s.Reconciled != nil && !*s.Reconciled {
		reconcileFailed = 1
	}
	// failed: checks of this pass that failed (the entry is now stale or down);
	// reconcile_failed: 1 when the end-of-pass catalog reconcile failed.
	emf.NewWriter(c.o.Metrics).Write(passSchema, []emf.Prop{{Key: "Function", Value: "healthcheck"}},
		float64(s.Checked), float64(s.Healthy), float64(s.Stale), float64(s.Down), float64(s.Skipped),
		float64(s.DurationMS), float64(s.Stale+s.Down), float64(reconcileFailed))
}

// passSchema is the pass's EMF line: its counts and duration by {Function}.
var passSchema = emf.NewSchema("Agentpack/HealthCheck", [][]string{{"Function"}},
	emf.Metric{Name: "checked", Unit: emf.Count}, emf.Metric{Name: "healthy", Unit: emf.Count},
	emf.Metric{Name: "stale", Unit: emf.Count}, emf.Metric{Name: "down", Unit: emf.Count},
	emf.Metric{Name: "skipped", Unit: emf.Count}, emf.Metric{Name: "duration_ms", Unit: emf.Milliseconds},
	emf.Metric{Name: "failed", Unit: emf.Count}, emf.Metric{Name: "reconcile_failed", Unit: emf.Count})

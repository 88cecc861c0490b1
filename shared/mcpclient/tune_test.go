package mcpclient

import (
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/agentpack/gateway/shared/testpeer"
)

// TestAltIsBetter: the older revision wins only when clearly faster, by 0.2 ms and by 20 %.
func TestAltIsBetter(t *testing.T) {
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	for _, tc := range []struct {
		a, b float64
		want bool
	}{
		{1.8, 0.7, true},   // server-everything on loopback
		{0.3, 0.25, false}, // 17 %, 0.05 ms: noise
		{0.5, 0.35, false}, // 30 % but 0.15 ms
		{5.0, 4.5, false},  // 0.5 ms but 10 %
		{1.0, 0.8, true},   // exactly 0.2 ms and 20 %
		{0.5, 0.9, false},  // slower
	} {
		if got := altIsBetter(ms(tc.a), ms(tc.b)); got != tc.want {
			t.Errorf("altIsBetter(%.2f ms, %.2f ms) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestVersionByMeasurement: an upstream whose tools/call is 100 ms slower at 2025-11-25 is
// moved to 2025-03-26 after both are measured, one slower at 2025-03-26 keeps 2025-11-25
// (the rule for noise-sized differences is TestAltIsBetter's),
// and one declaring tasks (which 2025-03-26 lacks) is never moved. Calls run from four
// goroutines at once and all succeed through the switch (a retired session finishes the
// calls already on it). The delay is far above what a loaded machine adds to a loopback
// call (tens of milliseconds under the race detector at load 30), so the medians cannot
// swap places through noise.
func TestVersionByMeasurement(t *testing.T) {
	const tuneTestDelay = 100 * time.Millisecond
	t.Parallel()
	for _, tc := range []struct {
		name  string
		delay map[string]time.Duration
		tasks bool
		want  string
	}{
		{"slower at 2025-11-25", map[string]time.Duration{"2025-11-25": tuneTestDelay}, false, tuneAltVersion},
		{"slower at 2025-03-26", map[string]time.Duration{"2025-03-26": tuneTestDelay}, false, PreferredProtocolVersion},
		{"runs tasks", map[string]time.Duration{"2025-11-25": tuneTestDelay}, true, PreferredProtocolVersion},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := testpeer.NewRawUpstream(t, false)
			up.VersionDelay = tc.delay
			if tc.tasks {
				up.WithTasks()
			}
			p := newPool(t, nil)
			tg := Target{ConnectionID: "tune", URL: up.URL}
			var wg sync.WaitGroup
			for range 4 {
				wg.Go(func() {
					for range tuneSamples {
						if _, err := p.Forward(t.Context(), tg, "tools/call", json.RawMessage(`{"name":"plain","arguments":{}}`), nil); err != nil {
							t.Errorf("call: %v", err)
							return
						}
					}
				})
			}
			wg.Wait()
			// One more call settles a switch decided by the last batch.
			if _, err := p.Forward(t.Context(), tg, "tools/call", json.RawMessage(`{"name":"plain","arguments":{}}`), nil); err != nil {
				t.Fatal(err)
			}
			st := p.Status()
			if len(st) != 1 || st[0].Info.ProtocolVersion != tc.want {
				t.Fatalf("status %+v, want protocol %s", st, tc.want)
			}
		})
	}
}

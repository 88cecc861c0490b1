package mcpclient

import (
	"encoding/json"
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

// TestVersionByMeasurement: against the npm reference server, whose tools/call is about a
// millisecond slower at 2025-11-25 than at 2025-03-26, the pool moves the connection to
// 2025-03-26 after measuring both, and calls keep succeeding throughout the switch.
func TestVersionByMeasurement(t *testing.T) {
	t.Parallel()
	p := newPool(t, nil)
	tg := Target{ConnectionID: "tune", URL: testpeer.Everything(t, "streamable")}
	for i := range 3*tuneSamples + 4 {
		if _, err := p.Forward(t.Context(), tg, "tools/call", json.RawMessage(`{"name":"echo","arguments":{"message":"m"}}`), nil); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	st := p.Status()
	if len(st) != 1 || st[0].Info.ProtocolVersion != tuneAltVersion {
		t.Fatalf("status %+v, want protocol %s", st, tuneAltVersion)
	}
}

package mcpclient

import (
	"encoding/json"
	"testing"

	"github.com/agentpack/gateway/shared/testpeer"
)

// TestVersionByMeasurement: against the npm reference server, whose tools/call is much
// slower at 2025-11-25 than at 2025-03-26, the pool moves the connection to 2025-03-26
// after measuring both; against the Go fixture (no difference) it keeps 2025-11-25. Calls
// keep succeeding throughout the switch.
func TestVersionByMeasurement(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, url, want string
	}{
		{"server-everything", testpeer.Everything(t, "streamable"), tuneAltVersion},
		{"go fixture", testpeer.NewFixture(t, nil).URL, PreferredProtocolVersion},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPool(t, nil)
			tg := Target{ConnectionID: "tune", URL: tc.url}
			for i := range 3*tuneSamples + 4 {
				if _, err := p.Forward(t.Context(), tg, "tools/call", json.RawMessage(`{"name":"echo","arguments":{"message":"m"}}`), nil); err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
			}
			st := p.Status()
			if len(st) != 1 || st[0].Info.ProtocolVersion != tc.want {
				t.Fatalf("status %+v, want protocol %s", st, tc.want)
			}
		})
	}
}

package upstreamauth_test

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentpack/gateway/shared/upstreamauth"
)

// TestRequestState: a requestState opens only for the binding it was sealed to (caller,
// workspace, connection, method, name, salient params) and before its expiry; a retry that
// re-encodes the same arguments (spacing, member order, _meta, inputResponses) still
// matches; a tampered or foreign state is refused; and any instance with the same key opens
// it (stateless).
func TestRequestState(t *testing.T) {
	t.Parallel()
	sealer, err := upstreamauth.NewKeyFileSealer(filepath.Join(t.TempDir(), "k"))
	if err != nil {
		t.Fatal(err)
	}
	var now atomic.Int64
	now.Store(time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC).Unix())
	clock := func() time.Time { return time.Unix(now.Load(), 0) }
	svc := func() *upstreamauth.Service {
		return upstreamauth.New(upstreamauth.Options{Store: upstreamauth.NewDBStore(nil, sealer), Now: clock})
	}
	a, b := svc(), svc() // two instances sharing the key
	bind := upstreamauth.Binding{Subject: "member-A", Workspace: "ws-1", ConnectionID: "c-1", Method: "tools/call",
		Name: "mcp_linear_search", Params: json.RawMessage(`{"name":"mcp_linear_search","arguments":{"q":"x","n":1.50}}`)}
	state, err := a.SealRequestState(t.Context(), bind)
	if err != nil {
		t.Fatal(err)
	}
	if !upstreamauth.IsGatewayState(state) || strings.Contains(state, "member-A") {
		t.Fatalf("state %q", state)
	}
	retry := bind
	retry.Params = json.RawMessage(`{"arguments": {"n": 1.50, "q": "x"}, "name": "mcp_linear_search",
		"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}, "requestState": "` + state + `",
		"inputResponses": {"agentpack_authorize": {"action": "accept"}}}`)
	if err := b.OpenRequestState(t.Context(), state, retry); err != nil {
		t.Fatalf("the retry on another instance: %v", err)
	}
	other := func(f func(*upstreamauth.Binding)) upstreamauth.Binding { x := bind; f(&x); return x }
	refused := map[string]struct {
		state string
		bind  upstreamauth.Binding
	}{
		"another caller":     {state, other(func(x *upstreamauth.Binding) { x.Subject = "member-B" })},
		"another workspace":  {state, other(func(x *upstreamauth.Binding) { x.Workspace = "ws-2" })},
		"another connection": {state, other(func(x *upstreamauth.Binding) { x.ConnectionID = "c-2" })},
		"another method":     {state, other(func(x *upstreamauth.Binding) { x.Method = "prompts/get" })},
		"another tool":       {state, other(func(x *upstreamauth.Binding) { x.Name = "mcp_linear_delete" })},
		"other arguments": {state, other(func(x *upstreamauth.Binding) {
			x.Params = json.RawMessage(`{"name":"mcp_linear_search","arguments":{"q":"y","n":1.50}}`)
		})},
		"tampered":        {state[:len(state)-2] + "AA", bind},
		"not base64":      {upstreamauth.StatePrefix + "!!", bind},
		"an upstream's":   {"up-state-1", bind},
		"empty sealed":    {upstreamauth.StatePrefix, bind},
		"params not JSON": {state, other(func(x *upstreamauth.Binding) { x.Params = json.RawMessage(`[1]`) })},
	}
	for name, tc := range refused {
		t.Run(name, func(t *testing.T) {
			if err := a.OpenRequestState(t.Context(), tc.state, tc.bind); !errors.Is(err, upstreamauth.ErrRequestState) {
				t.Errorf("OpenRequestState = %v, want ErrRequestState", err)
			}
		})
	}
	t.Run("expired", func(t *testing.T) {
		now.Add(int64(upstreamauth.RequestStateTTL / time.Second))
		err := a.OpenRequestState(t.Context(), state, bind)
		if !errors.Is(err, upstreamauth.ErrRequestState) || !strings.Contains(err.Error(), "expired") {
			t.Errorf("after the TTL: %v", err)
		}
	})
	t.Run("another key", func(t *testing.T) {
		// A Service over another store (tests' MemoryStore) seals with a key of its process:
		// the deployment's states do not open there.
		mem := upstreamauth.New(upstreamauth.Options{Store: &upstreamauth.MemoryStore{}, Now: clock})
		s2, err := mem.SealRequestState(t.Context(), bind)
		if err != nil {
			t.Fatal(err)
		}
		if err := a.OpenRequestState(t.Context(), s2, bind); !errors.Is(err, upstreamauth.ErrRequestState) {
			t.Errorf("a state of another key opened: %v", err)
		}
	})
	t.Run("seal refuses params that are not an object", func(t *testing.T) {
		if _, err := a.SealRequestState(t.Context(), other(func(x *upstreamauth.Binding) { x.Params = json.RawMessage(`"x"`) })); err == nil {
			t.Error("sealed a binding whose params are not an object")
		}
	})
}

package connections

import (
	"context"
	"encoding/json"

	"github.com/agentpack/gateway/shared/mcpclient"
)

// uiResources lists the MCP Apps views (ui:// resources) of the upstream behind target
// during a refresh (docs/ARCHITECTURE.md "MCP Apps"). An upstream that declares no
// resources capability has none: nil, without asking. ok is false when the listing failed:
// the refresh then keeps what was stored (a view's listing is an extra, never the reason a
// refresh fails); the failure is logged.
func (s *Service) uiResources(ctx context.Context, target mcpclient.Target, info mcpclient.Info, connID string) (defs []json.RawMessage, ok bool) {
	var caps struct {
		Resources json.RawMessage `json:"resources"`
	}
	if len(info.Capabilities) == 0 || json.Unmarshal(info.Capabilities, &caps) != nil || caps.Resources == nil {
		return nil, true
	}
	defs, err := s.Upstreams.ListUIResources(ctx, target)
	if err != nil {
		s.logger().WarnContext(ctx, "upstream resources/list failed; MCP Apps views kept as they were",
			"connection_id", connID, "err", err)
		return nil, false
	}
	if defs == nil {
		defs = []json.RawMessage{}
	}
	return defs, true
}

package connections

import (
	"context"
	"encoding/json"
	"time"

	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/derrors"
)

// DefaultTestTimeout is the budget of Test (POST /{id}/test, timeout 10 s).
const DefaultTestTimeout = 10 * time.Second

// MarshalJSON writes r as the test answer {success, toolCount?, error?}, plus the
// tool-list changes and the transport that worked when there are any, and on a failure
// where it failed: stage (dns, connect, tls, http, protocol), httpStatus when the upstream
// answered, and a hint (mcpclient.Failure).
func (r RefreshResult) MarshalJSON() ([]byte, error) {
	v := TestAnswer{Success: r.OK, Error: r.Error}
	if !r.OK && r.Failure != nil {
		v.Stage, v.HTTPStatus, v.Hint = r.Failure.Stage, r.Failure.HTTPStatus, r.Failure.Hint
	}
	if r.Sync != nil && r.Sync.Changed() {
		v.Changes = r.Sync
	}
	if r.OK {
		n := r.ToolCount
		v.ToolCount = &n
		v.Transport = r.Info.Transport
	}
	for _, d := range r.Info.Dropped {
		v.Dropped = append(v.Dropped, droppedView{Name: d.Name, Reason: d.Reason})
	}
	return json.Marshal(v)
}

// TestAnswer is RefreshResult on the wire (its MarshalJSON; the OpenAPI document's
// TestResult).
type TestAnswer struct {
	Success    bool           `json:"success"`
	ToolCount  *int           `json:"toolCount,omitempty" doc:"On success."`
	Error      string         `json:"error,omitempty" doc:"On failure; never contains header values, the URL's query, or raw network error text."`
	Stage      string         `json:"stage,omitempty" enum:"dns,connect,tls,http,protocol" doc:"On failure: where the connect or the listing failed. dns: the host name did not resolve; connect: no TCP connection (refused, unreachable, blocked address); tls: the TLS handshake failed (certificate, or not TLS at all); http: the upstream answered with a non-success status (httpStatus), or not at all; protocol: HTTP worked but the MCP exchange did not: the upstream answered initialize or tools/list with a JSON-RPC error (the error names its code and message), or with a body that is not MCP."`
	HTTPStatus int            `json:"httpStatus,omitempty" doc:"On failure, when the upstream answered: its HTTP status. A redirect (3xx) is reported, not followed; the error names its target without the query."`
	Hint       string         `json:"hint,omitempty" doc:"On failure, when there is one: what to try (e.g. a 404 on a URL without /mcp suggests the /mcp URL)."`
	Transport  string         `json:"transport,omitempty" enum:"streamable-http,sse"`
	Changes    *db.SyncResult `json:"changes,omitempty" doc:"The tool-list changes of this listing, when there are any."`
	Dropped    []droppedView  `json:"droppedTools,omitempty" doc:"Tools the listing dropped, with why."`
}

type droppedView struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// Test connects to connection id afresh (admin; POST /{id}/test) within
// TestTimeout (default 10 s), lists and stores its tools (drift detection included),
// records the outcome on the connection, logs mcp.connection_tested and rebuilds the
// catalog. An upstream failure is the result's Error (success false), not an error.
// Errors: FORBIDDEN, NOT_FOUND, UNAVAILABLE (database).
func (s *Service) Test(ctx context.Context, p *auth.Principal, id string) (_ *RefreshResult, err error) {
	defer derrors.Wrap(&err, "connections: test %s", id)
	tctx, cancel := context.WithTimeout(ctx, s.testBudget())
	defer cancel()
	return s.probe(tctx, p, id, true, "mcp.connection_tested")
}

// testBudget is Test's time limit: TestTimeout, or DefaultTestTimeout when it is not positive.
func (s *Service) testBudget() time.Duration {
	if s.TestTimeout <= 0 {
		return DefaultTestTimeout
	}
	return s.TestTimeout
}

// RefreshByID re-lists connection id's tools on its cached (or a new) session (admin;
// POST /api/mcp-connections/{id}/refresh), stores them with drift detection (docs/DESIGN.md §6:
// a changed definition is withheld until approved, and logged as mcp.tool_drift), logs
// mcp.connection_refreshed and rebuilds the catalog. Errors: as Test.
func (s *Service) RefreshByID(ctx context.Context, p *auth.Principal, id string) (_ *RefreshResult, err error) {
	defer derrors.Wrap(&err, "connections: refresh %s", id)
	return s.probe(ctx, p, id, false, "mcp.connection_refreshed")
}

func (s *Service) probe(ctx context.Context, p *auth.Principal, id string, fresh bool, action string) (*RefreshResult, error) {
	c, err := s.writable(ctx, s.Pool, p, id)
	if err != nil {
		return nil, err
	}
	if fresh {
		s.Upstreams.Disconnect(c.ID)
		if id := s.TargetFor(ctx, c, p.Subject).ConnectionID; id != c.ID {
			s.Upstreams.Disconnect(id) // the caller's own session of an oauth_per_user connection
		}
	}
	res, err := s.Refresh(ctx, p.Subject, c)
	if !c.Enabled {
		s.Upstreams.Disconnect(c.ID) // a disabled connection keeps no session
	}
	if err != nil {
		return nil, err
	}
	wctx := context.WithoutCancel(ctx) // the budget was for the upstream, not the bookkeeping
	extra := map[string]any{"success": res.OK}
	if res.OK {
		extra["toolCount"] = res.ToolCount
		if res.Sync != nil && res.Sync.Changed() {
			extra["changes"] = res.Sync
		}
	} else {
		extra["error"] = res.Error
	}
	if err := logEvent(wctx, s.Pool, p, action, c, extra); err != nil {
		return nil, err
	}
	s.publish(wctx, c.WorkspaceID, c.ID)
	return res, nil
}

// RefreshAndPublish is Refresh followed by a rebuild of the affected catalog documents
// when the tool list or the remembered transport changed: what the health check calls
// for an installed connection (docs/DESIGN.md §6, §9a). actor names the caller in events
// (e.g. "healthcheck"). Errors: database failures only.
func (s *Service) RefreshAndPublish(ctx context.Context, actor string, c *db.Connection) (_ *RefreshResult, err error) {
	defer derrors.Wrap(&err, "connections: refresh and publish %s", c.ID)
	res, err := s.Refresh(ctx, actor, c)
	if err != nil {
		return nil, err
	}
	transportChanged := res.OK && (c.WorkingTransport == nil || *c.WorkingTransport != res.Info.Transport)
	if (res.Sync != nil && res.Sync.Changed()) || transportChanged {
		s.publish(ctx, c.WorkspaceID, c.ID)
	}
	return res, nil
}

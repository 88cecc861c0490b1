package connections

import (
	"context"
	"time"

	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/derrors"
	"github.com/agentpack/gateway/shared/upstreamauth"
)

// Status is one connection's connect state (GET /statuses): Live* come from this
// process's session cache (a Lambda container sees only the sessions it made), the rest
// is the last state recorded in Postgres.
type Status struct {
	ConnectionID        string         `json:"connectionId" format:"uuid"`
	Name                string         `json:"name"`
	Handle              string         `json:"handle"`
	Source              string         `json:"source"`
	Enabled             bool           `json:"enabled"`
	WorkspaceID         *string        `json:"workspaceId" format:"uuid"`
	Live                bool           `json:"live"`
	LiveTransport       string         `json:"liveTransport,omitempty" enum:"streamable-http,sse"`
	LiveProtocolVersion string         `json:"liveProtocolVersion,omitempty"`
	ConnectedAt         *time.Time     `json:"connectedAt,omitempty"`
	LastUsedAt          *time.Time     `json:"lastUsedAt,omitempty"`
	LastConnectedAt     *time.Time     `json:"lastConnectedAt"`
	LastError           *string        `json:"lastError"`
	WorkingTransport    *string        `json:"workingTransport"`
	Tools               map[string]int `json:"tools"` // count per status: active, drifted, pending
	// Authorization is the upstream authorization of an OAuth connection (the caller's own
	// grant for oauth_per_user): authorized | required | expired, who and when.
	Authorization *AuthorizationState `json:"authorization,omitempty"`
}

// Statuses returns the status of every connection p may see (admin), optionally narrowed
// to workspace ws. Errors: FORBIDDEN, NOT_FOUND (ws not p's).
func (s *Service) Statuses(ctx context.Context, p *auth.Principal, ws string) (_ []Status, err error) {
	defer derrors.Wrap(&err, "connections: statuses %s", ws)
	if err := auth.RequireAdmin(p); err != nil {
		return nil, err
	}
	conns, err := s.List(ctx, p, ws)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(conns))
	for i := range conns {
		ids[i] = conns[i].ID
	}
	counts, err := db.ConnectionToolCounts(ctx, s.Pool, ids)
	if err != nil {
		return nil, err
	}
	live := map[string]int{}
	all := s.Upstreams.Status()
	for i, st := range all {
		live[st.ConnectionID] = i
	}
	out := make([]Status, 0, len(conns))
	for _, c := range conns {
		st := Status{ConnectionID: c.ID, Name: c.Name, Handle: c.Handle, Source: c.Source, Enabled: c.Enabled,
			WorkspaceID: c.WorkspaceID, LastConnectedAt: c.LastConnectedAt, LastError: c.LastError,
			WorkingTransport: c.WorkingTransport, Tools: map[string]int{db.ToolActive: 0, db.ToolDrifted: 0, db.ToolPending: 0}}
		for k, n := range counts[c.ID] {
			st.Tools[k] = n
		}
		if st.Authorization, err = s.AuthorizationOf(ctx, &c, p.Subject); err != nil {
			return nil, err
		}
		if i, ok := live[c.ID]; ok {
			l := all[i]
			st.Live, st.LiveTransport, st.LiveProtocolVersion = true, l.Info.Transport, l.Info.ProtocolVersion
			st.ConnectedAt, st.LastUsedAt = &l.ConnectedAt, &l.LastUsedAt
		}
		out = append(out, st)
	}
	states := make([]*AuthorizationState, len(out))
	for i := range out {
		states[i] = out[i].Authorization
	}
	if err := s.NameAuthorizers(ctx, states...); err != nil {
		return nil, err
	}
	return out, nil
}

// MyAuthorization is one OAuth connection as GET /api/mcp-connections/authorizations shows
// it to the caller: whether the caller's calls through it are authorized upstream (for
// oauth_per_user the caller's own grant, otherwise the connection's shared one) and whether
// the caller may start the consent (POST …/{id}/authorize: anyone for their own
// oauth_per_user grant, an admin for a shared grant; docs/UPSTREAM-AUTH.md).
type MyAuthorization struct {
	ConnectionID string  `json:"connectionId" format:"uuid"`
	Name         string  `json:"name"`
	Handle       string  `json:"handle" doc:"The connection handle (tool prefix mcp_<handle>_)."`
	WorkspaceID  *string `json:"workspaceId" format:"uuid" doc:"null for a global connection."`
	Enabled      bool    `json:"enabled"`
	// CanAuthorize: the caller may start (or redo) this authorization.
	CanAuthorize  bool               `json:"canAuthorize" doc:"The caller may start (or redo) this authorization: POST /api/mcp-connections/{id}/authorize answers their own consent link."`
	Authorization AuthorizationState `json:"authorization"`
}

// MyAuthorizations lists the OAuth connections p may use (workspace connections of p's
// workspaces and global ones; optionally only workspace ws) with p's authorization state
// of each — any role, since each member consents for their own oauth_per_user grant.
// Connections without OAuth are left out. Errors: NOT_FOUND (ws not p's), the database's.
func (s *Service) MyAuthorizations(ctx context.Context, p *auth.Principal, ws string) (_ []MyAuthorization, err error) {
	defer derrors.Wrap(&err, "connections: my authorizations %s", ws)
	conns, err := s.List(ctx, p, ws)
	if err != nil {
		return nil, err
	}
	out := []MyAuthorization{}
	for i := range conns {
		c := &conns[i]
		st, err := s.AuthorizationOf(ctx, c, p.Subject)
		if err != nil {
			return nil, err
		}
		if st == nil {
			continue
		}
		mode := upstreamauth.Mode(c.AuthMode)
		can := mode == upstreamauth.ModeOAuthPerUser || (p.IsAdmin() && (c.WorkspaceID != nil || p.IsSuperuser()))
		out = append(out, MyAuthorization{ConnectionID: c.ID, Name: c.Name, Handle: c.Handle, WorkspaceID: c.WorkspaceID,
			Enabled: c.Enabled, CanAuthorize: can, Authorization: *st})
	}
	states := make([]*AuthorizationState, len(out))
	for i := range out {
		states[i] = &out[i].Authorization
	}
	if err := s.NameAuthorizers(ctx, states...); err != nil {
		return nil, err
	}
	return out, nil
}

// Where a request goes: the connection's target with the caller's upstream credentials
// (or the authorization answer instead), and the cache of connection rows.

package forward

import (
	"context"
	"time"

	"github.com/agentpack/gateway/functions/mcp/gateway/request"
	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/budget"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/mcpclient"
	"github.com/agentpack/gateway/shared/upstreamauth"
	"github.com/maypok86/otter/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Prepared is where a proxied request goes: the Target to forward to, or — for an OAuth
// connection the caller has no usable token for — the answer to give instead (nothing is
// sent upstream; connections.PrepareCall): a result (isError with the authorization link,
// for clients before 2025-11-25) or a JSON-RPC error (-32042 with it).
type Prepared struct {
	Target    mcpclient.Target
	Answer    *mcp.CallToolResult
	AnswerErr error
}

// Prepare resolves connection c's target for st's caller (docs/UPSTREAM-AUTH.md), with
// the authorization answer of st's revision — at 2026-07-28 the text answer (an isError
// result), since an InputRequiredResult needs the request's binding and requestState,
// which only Call and Method build. NOT_FOUND when the connection was removed.
func (f *Forwarder) Prepare(ctx context.Context, st *request.State, c *catalog.Connection) (*Prepared, error) {
	v := st.Version
	if v >= upstreamauth.InputRequiredVersion {
		v = ""
	}
	return f.prepare(ctx, st, c, v)
}

// prepare is Prepare with the authorization answer of revision answerVersion
// (AnswerVersion).
func (f *Forwarder) prepare(ctx context.Context, st *request.State, c *catalog.Connection, answerVersion string) (*Prepared, error) {
	row, err := f.targets.row(ctx, f.o.Pool, c)
	if err != nil {
		return nil, err
	}
	if f.o.Connections == nil {
		return &Prepared{Target: connections.TargetOf(row)}, nil
	}
	t, answer, answerErr, err := f.o.Connections.PrepareCall(ctx, row, st.Principal, answerVersion)
	if err != nil {
		return nil, err
	}
	return &Prepared{Target: t, Answer: answer, AnswerErr: answerErr}, nil
}

// stepUp answers a request of connection c for st's caller that failed with callErr because
// the upstream asked for more scopes or refused the grant's token (connections.StepUp,
// with the answer of revision answerVersion); ok is false for any other failure.
func (f *Forwarder) stepUp(ctx context.Context, st *request.State, c *catalog.Connection, answerVersion string, callErr error) (*mcp.CallToolResult, error, bool) {
	if f.o.Connections == nil {
		return nil, nil, false
	}
	row, err := f.targets.row(ctx, f.o.Pool, c)
	if err != nil {
		return nil, nil, false
	}
	return f.o.Connections.StepUp(ctx, row, st.Principal, answerVersion, callErr)
}

// TargetFor is connection row's target with subject's upstream credentials (a task's
// owner), or the plain target without a connection service.
func (f *Forwarder) TargetFor(ctx context.Context, row *db.Connection, subject string) mcpclient.Target {
	if f.o.Connections == nil {
		return connections.TargetOf(row)
	}
	return f.o.Connections.TargetFor(ctx, row, subject)
}

// targetCache keeps each connection's row (URL, transport, headers, auth mode) in a warm
// process, keyed by connection id and replaced when the catalog shows a newer updatedAt.
// Headers are read from Postgres, never from the catalog document. It is bounded by bytes
// (rowSize; docs/CATALOG.md "Many workspaces per instance").
type targetCache struct {
	c *otter.Cache[string, *cachedTarget]
}

type cachedTarget struct {
	updatedAt time.Time
	row       *db.Connection
}

func newTargetCache(maxBytes int64) *targetCache {
	return &targetCache{c: budget.New[string](maxBytes, func(ct *cachedTarget) int64 { return rowSize(ct.row) }, nil)}
}

// rowSize estimates the bytes a cached row holds: its strings, capabilities and header
// names and values, plus 512 for the structs, pointers and the cache entry.
func rowSize(r *db.Connection) int64 {
	n := 512 + len(r.ID) + len(r.Name) + len(r.Handle) + len(r.URL) + len(r.TransportType) + len(r.Capabilities) +
		len(r.Source) + len(r.CreatedBy) + len(r.AuthMode)
	for _, p := range []*string{r.WorkingTransport, r.ProtocolVersion, r.CatalogEntryID, r.WorkspaceID, r.ProjectID, r.LastError} {
		if p != nil {
			n += len(*p)
		}
	}
	for k, v := range r.Headers {
		n += len(k) + len(v) + 32
	}
	return int64(n)
}

// row returns connection c's row (cached per updatedAt); NOT_FOUND when it was removed.
func (tc *targetCache) row(ctx context.Context, pool *db.Pool, c *catalog.Connection) (*db.Connection, error) {
	if ct, ok := tc.c.GetIfPresent(c.ID); ok && ct.updatedAt.Equal(c.UpdatedAt) {
		return ct.row, nil
	}
	row, err := db.ConnectionGet(ctx, pool, c.ID)
	if err != nil {
		if apperr.CodeOf(err) == apperr.NotFound {
			return nil, apperr.New(apperr.NotFound, "this server was removed")
		}
		return nil, err
	}
	tc.c.Set(c.ID, &cachedTarget{updatedAt: c.UpdatedAt, row: row})
	return row, nil
}

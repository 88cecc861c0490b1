package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/headers"
	"golang.org/x/sync/errgroup"
)

// Build reads workspace ws's document from Postgres: its enabled connections (global ones
// folded in) ordered by handle, each with its active tools ordered by exposed name and the
// MCP Apps views its upstream listed, and the workspace's tool discovery threshold. The
// workspace's tool overrides are applied to each connection's tools (ApplyOverrides).
func Build(ctx context.Context, q db.Querier, ws string) (*Document, error) {
	conns, err := db.ConnectionListVisible(ctx, q, ws)
	if err != nil {
		return nil, err
	}
	tools, err := db.ConnectionToolsVisible(ctx, q, ws)
	if err != nil {
		return nil, err
	}
	views, err := db.ConnectionUIResourcesVisible(ctx, q, ws)
	if err != nil {
		return nil, err
	}
	byConn := make(map[string][]Tool)
	for _, t := range tools {
		byConn[t.ConnectionID] = append(byConn[t.ConnectionID], Tool{
			ExposedName: t.ExposedName, UpstreamName: t.UpstreamName, Title: t.Title,
			Description: t.Description, InputSchema: t.InputSchema,
			OutputSchema: t.OutputSchema, Annotations: t.Annotations, Definition: t.Definition,
		})
	}
	overrides, err := workspaceOverrides(ctx, q, ws)
	if err != nil {
		return nil, err
	}
	threshold, err := db.WorkspaceDiscoveryThreshold(ctx, q, ws)
	if err != nil && apperr.CodeOf(err) != apperr.NotFound {
		return nil, err
	}
	doc := &Document{Version: SchemaVersion, WorkspaceID: ws, GeneratedAt: time.Now().UTC(), DiscoveryThreshold: threshold,
		Connections: make([]Connection, 0, len(conns))}
	for i := range conns {
		c := &conns[i]
		cc := Connection{
			ID: c.ID, Name: c.Name, Handle: c.Handle, Scope: c.Scope(), Source: c.Source,
			URL: headers.RedactURL(c.URL), TransportType: c.TransportType, UpdatedAt: c.UpdatedAt,
			Tools: ApplyOverrides(byConn[c.ID], overrides[c.ID]), Capabilities: c.Capabilities, UIResources: views[c.ID],
		}
		if cc.Tools == nil {
			cc.Tools = []Tool{}
		}
		if c.ProjectID != nil {
			cc.ProjectID = *c.ProjectID
		}
		if c.CatalogEntryID != nil {
			cc.CatalogEntryID = *c.CatalogEntryID
		}
		if c.WorkingTransport != nil {
			cc.WorkingTransport = *c.WorkingTransport
		}
		if c.ProtocolVersion != nil {
			cc.ProtocolVersion = *c.ProtocolVersion
		}
		doc.Connections = append(doc.Connections, cc)
	}
	return doc, nil
}

// workspaceOverrides returns workspace ws's tool overrides by connection id.
func workspaceOverrides(ctx context.Context, q db.Querier, ws string) (map[string][]db.ToolOverride, error) {
	if !db.IsUUID(ws) {
		return nil, nil
	}
	ovs, err := db.ToolOverrideList(ctx, q, ws, "")
	if err != nil {
		return nil, err
	}
	by := make(map[string][]db.ToolOverride)
	for _, o := range ovs {
		by[o.ConnectionID] = append(by[o.ConnectionID], o)
	}
	return by, nil
}

// Rebuild rewrites the documents of the given workspaces; a nil or empty list means
// every workspace (a global connection changed). Each workspace's read-and-write runs
// under a transaction-scoped advisory lock so that two rebuilds of one workspace never
// interleave and the last writer saw the last committed state. Up to four workspaces are
// rebuilt at once (fewer with a smaller pool); every one is tried, and the result joins
// the errors of those that failed (the others are written).
func Rebuild(ctx context.Context, pool *db.Pool, store Store, workspaces []string) error {
	if len(workspaces) == 0 {
		all, err := db.WorkspaceList(ctx, pool)
		if err != nil {
			return err
		}
		for _, w := range all {
			workspaces = append(workspaces, w.ID)
		}
	}
	// Workspaces are independent (one transaction and advisory lock each): rebuild a few
	// at once, bounded by the pool (Lambda: 2 connections), and try every one even when
	// another fails, so that one bad workspace does not leave the rest stale.
	var g errgroup.Group
	g.SetLimit(max(1, min(4, int(pool.Config().MaxConns))))
	errs := make([]error, len(workspaces))
	for i, ws := range workspaces {
		g.Go(func() error {
			errs[i] = rebuildOne(ctx, pool, store, ws)
			return nil
		})
	}
	_ = g.Wait()
	return errors.Join(errs...)
}

func rebuildOne(ctx context.Context, pool *db.Pool, store Store, ws string) error {
	err := db.InTx(ctx, pool, func(tx db.Tx) error {
		if err := db.LockKey(ctx, tx, "catalog", ws); err != nil {
			return err
		}
		doc, err := Build(ctx, tx, ws)
		if err != nil {
			return err
		}
		data, err := json.Marshal(doc)
		if err != nil {
			return err
		}
		_, err = store.Put(ctx, ws, data)
		return err
	})
	if err != nil {
		return fmt.Errorf("catalog: rebuild %s: %w", ws, err)
	}
	return nil
}

// ScopeWorkspaces returns the workspaces whose documents a change to a connection with
// workspace id ws (nil = global) affects: just ws, or nil (= all) for a global one.
func ScopeWorkspaces(ws *string) []string {
	if ws == nil {
		return nil
	}
	return []string{*ws}
}

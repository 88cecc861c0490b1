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
// folded in) ordered by handle (bytewise), each with its active tools ordered by exposed
// name and the MCP Apps views its upstream listed, and the workspace's tool discovery
// threshold. Each connection is made by ConnectionPart, as the incremental path makes it, with the
// workspace's tool overrides applied (ApplyOverrides), and the access policies in force
// there (the workspace's and the global document, docs/POLICIES.md).
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
	byConn := make(map[string][]db.ConnectionTool)
	for _, t := range tools {
		byConn[t.ConnectionID] = append(byConn[t.ConnectionID], t)
	}
	overrides, err := workspaceOverrides(ctx, q, ws)
	if err != nil {
		return nil, err
	}
	threshold, err := db.WorkspaceDiscoveryThreshold(ctx, q, ws)
	if err != nil && apperr.CodeOf(err) != apperr.NotFound {
		return nil, err
	}
	limits, err := db.RateLimitList(ctx, q, ws)
	if err != nil && apperr.CodeOf(err) != apperr.NotFound {
		return nil, err
	}
	wsPolicies, globalPolicies, err := db.AccessPolicyTexts(ctx, q, ws)
	if err != nil {
		return nil, err
	}
	doc := &Document{Version: SchemaVersion, WorkspaceID: ws, GeneratedAt: time.Now().UTC(), DiscoveryThreshold: threshold,
		Policies: policiesOf(wsPolicies, globalPolicies), RateLimits: rateLimitsOf(limits), Connections: make([]Connection, 0, len(conns))}
	for i := range conns {
		doc.Connections = append(doc.Connections, ConnectionPart(ws, &conns[i], byConn[conns[i].ID], views[conns[i].ID], overrides[conns[i].ID]))
	}
	sortConnections(doc.Connections)
	return doc, nil
}

// ConnectionPart is the one place a connection of workspace ws becomes its catalog entry
// (its part, docs/CATALOG.md): row c with its active tools (ordered by exposed name), the
// workspace's overrides of them applied (ApplyOverrides, docs/OVERRIDES.md), and its MCP
// Apps views. Build and the incremental path both call it, so that the two agree
// byte for byte. The URL is redacted (headers.RedactURL); header values are never read.
func ConnectionPart(ws string, c *db.Connection, tools []db.ConnectionTool, views []json.RawMessage, ovs []db.ToolOverride) Connection {
	_ = ws // the workspace the part is for (its overrides are ovs)
	cc := Connection{
		ID: c.ID, Name: c.Name, Handle: c.Handle, Scope: c.Scope(), Source: c.Source,
		URL: headers.RedactURL(c.URL), TransportType: c.TransportType, UpdatedAt: c.UpdatedAt,
		Tools: make([]Tool, 0, len(tools)), Capabilities: c.Capabilities, UIResources: views,
	}
	for _, t := range tools {
		cc.Tools = append(cc.Tools, Tool{
			ExposedName: t.ExposedName, UpstreamName: t.UpstreamName, Title: t.Title,
			Description: t.Description, InputSchema: t.InputSchema,
			OutputSchema: t.OutputSchema, Annotations: t.Annotations, Definition: t.Definition,
		})
	}
	cc.Tools = ApplyOverrides(cc.Tools, ovs)
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
	return cc
}

// buildConnection reads connection id from Postgres and makes its part for workspace ws;
// ok is false when id is not (or no longer) an enabled connection visible in ws.
func buildConnection(ctx context.Context, q db.Querier, ws, id string) (Connection, bool, error) {
	c, err := db.ConnectionGet(ctx, q, id)
	if apperr.CodeOf(err) == apperr.NotFound {
		return Connection{}, false, nil
	}
	if err != nil {
		return Connection{}, false, err
	}
	if !c.Enabled || (c.WorkspaceID != nil && *c.WorkspaceID != ws) {
		return Connection{}, false, nil
	}
	tools, err := db.ConnectionToolsActive(ctx, q, id)
	if err != nil {
		return Connection{}, false, err
	}
	views, err := db.ConnectionUIResources(ctx, q, id)
	if err != nil {
		return Connection{}, false, err
	}
	var ovs []db.ToolOverride
	if db.IsUUID(ws) {
		if ovs, err = db.ToolOverrideList(ctx, q, ws, id); err != nil {
			return Connection{}, false, err
		}
	}
	return ConnectionPart(ws, c, tools, views, ovs), true, nil
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
		old, oldTag, err := readIndex(ctx, store, ws)
		if err != nil && !errors.Is(err, ErrNotFound) {
			// An unreadable index is replaced whole (every part written again).
			var de *decodeError
			if !errors.As(err, &de) {
				return err
			}
			old = nil
		}
		_, err = writeParts(ctx, store, ws, old, oldTag, docIndex(doc), doc.Connections, true)
		return err
	})
	if err != nil {
		return fmt.Errorf("catalog: rebuild %s: %w", ws, err)
	}
	return nil
}

// RebuildConnections brings the documents of the given workspaces (nil or empty: every
// workspace, for a change to a global connection) up to date after a change to the
// connections ids only: in each, the part of every one of ids is rebuilt from Postgres
// (ConnectionPart) and written, or dropped when the connection is no longer enabled and
// visible there, and the index is rewritten; no other part is read or written, so a
// change costs O(that connection) in the store, not O(workspace) (Postgres is asked for
// the visible connections' ids only, to check the index). A workspace whose index is
// missing or unreadable, or names other connections than Postgres shows besides ids (an
// earlier publish failed), is rebuilt whole (Rebuild). No ids means a whole Rebuild. Locking,
// concurrency and errors are Rebuild's.
func RebuildConnections(ctx context.Context, pool *db.Pool, store Store, workspaces []string, ids ...string) error {
	if len(ids) == 0 {
		return Rebuild(ctx, pool, store, workspaces)
	}
	if len(workspaces) == 0 {
		all, err := db.WorkspaceList(ctx, pool)
		if err != nil {
			return err
		}
		for _, w := range all {
			workspaces = append(workspaces, w.ID)
		}
	}
	var g errgroup.Group
	g.SetLimit(max(1, min(4, int(pool.Config().MaxConns))))
	errs := make([]error, len(workspaces))
	for i, ws := range workspaces {
		g.Go(func() error {
			errs[i] = updateOne(ctx, pool, store, ws, ids)
			return nil
		})
	}
	_ = g.Wait()
	return errors.Join(errs...)
}

func updateOne(ctx context.Context, pool *db.Pool, store Store, ws string, ids []string) error {
	whole := false
	err := db.InTx(ctx, pool, func(tx db.Tx) error {
		if err := db.LockKey(ctx, tx, "catalog", ws); err != nil {
			return err
		}
		old, oldTag, err := readIndex(ctx, store, ws)
		if err != nil {
			var de *decodeError
			if errors.Is(err, ErrNotFound) || errors.As(err, &de) {
				whole = true
				return nil
			}
			return err
		}
		changed := make(map[string]bool, len(ids))
		for _, id := range ids {
			changed[id] = true
		}
		var keep []PartRef
		for _, p := range old.Parts {
			if !changed[p.ID] {
				keep = append(keep, p)
			}
		}
		// The index must name exactly the visible connections besides ids; when it does
		// not (an earlier publish failed after its commit), rebuild whole instead.
		visible, err := db.ConnectionIDsVisible(ctx, tx, ws)
		if err != nil {
			return err
		}
		others := 0
		kept := make(map[string]bool, len(keep))
		for _, p := range keep {
			kept[p.ID] = true
		}
		for _, id := range visible {
			if !changed[id] {
				if !kept[id] {
					whole = true
					return nil
				}
				others++
			}
		}
		if others != len(keep) {
			whole = true
			return nil
		}
		var conns []Connection
		for id := range changed {
			c, ok, err := buildConnection(ctx, tx, ws, id)
			if err != nil {
				return err
			}
			if ok {
				conns = append(conns, c)
			}
		}
		threshold, err := db.WorkspaceDiscoveryThreshold(ctx, tx, ws)
		if err != nil && apperr.CodeOf(err) != apperr.NotFound {
			return err
		}
		limits, err := db.RateLimitList(ctx, tx, ws)
		if err != nil && apperr.CodeOf(err) != apperr.NotFound {
			return err
		}
		wsPolicies, globalPolicies, err := db.AccessPolicyTexts(ctx, tx, ws)
		if err != nil {
			return err
		}
		ix := &Index{Version: LayoutVersion, WorkspaceID: ws, GeneratedAt: time.Now().UTC(), DiscoveryThreshold: threshold,
			Policies: policiesOf(wsPolicies, globalPolicies), RateLimits: rateLimitsOf(limits)}
		_, err = writeParts(ctx, store, ws, old, oldTag, ix, conns, false, keep...)
		return err
	})
	if err != nil {
		return fmt.Errorf("catalog: rebuild %s: %w", ws, err)
	}
	if whole {
		return rebuildOne(ctx, pool, store, ws)
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

// rateLimitsOf are the catalog's rules of the workspace's limit rows (nil: none).
func rateLimitsOf(rows []db.RateLimit) []RateLimit {
	var out []RateLimit
	for _, r := range rows {
		l := RateLimit{ID: r.ID, Principal: r.Principal, PerMinute: r.PerMinute, PerDay: r.PerDay}
		if r.ConnectionID != nil {
			l.ConnectionID = *r.ConnectionID
		}
		if r.Tool != nil {
			l.Tool = *r.Tool
		}
		out = append(out, l)
	}
	return out
}

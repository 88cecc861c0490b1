//lint:file-ignore SA1019 MCP logging is deprecated as of 2026-07-28 (SEP-2577); the gateway still relays and advertises it for the revisions before, which define it.

package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/agentpack/gateway/functions/mcp/gateway/apps"
	"github.com/agentpack/gateway/functions/mcp/gateway/builtin"
	"github.com/agentpack/gateway/functions/mcp/gateway/forward"
	"github.com/agentpack/gateway/functions/mcp/gateway/listing"
	"github.com/agentpack/gateway/functions/mcp/gateway/skills"
	"github.com/agentpack/gateway/functions/mcp/gateway/wire"
	"github.com/agentpack/gateway/shared/budget"
	"github.com/agentpack/gateway/shared/logx"
	"github.com/maypok86/otter/v2"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// getServer is go-sdk's per-request server hook. It returns the cached server for the
// request's key (building it once), memoised on the request state because go-sdk calls
// it twice per POST.
func (g *Gateway) getServer(r *http.Request) *mcp.Server {
	st := stateFrom(r.Context())
	if st == nil {
		return nil
	}
	if st.server == nil {
		it := g.serverItem(st)
		it.once.Do(func() {
			it.s = g.buildServer(st)
			it.grew(builtServerBytes)
		})
		st.server = it.s
	}
	return st.server
}

// serverItem returns the cached item for st's key (memoised on st). Its go-sdk server is
// built on first use by getServer; the edge's tables (tools/list answer, proxied tools by
// name) are built on first use too, so a proxied call never builds a go-sdk server.
func (g *Gateway) serverItem(st *requestState) *serverItem {
	if st.item == nil {
		st.key = serverKey(st)
		st.item = g.servers.get(st.key, st.Snapshot.Size())
	}
	return st.item
}

// serverKey identifies what a server holds: workspace, catalog ETag, role class,
// toolsets, project, chat resolution, endpoint and discovery mode. Nothing per-principal beyond the role
// class is in a server, so two principals with one key may share it.
func serverKey(st *requestState) string {
	var b strings.Builder
	b.WriteString(st.Workspace)
	b.WriteByte('|')
	b.WriteString(st.Snapshot.ETag)
	b.WriteByte('|')
	b.WriteString(builtin.RoleClass(st.Principal))
	b.WriteByte('|')
	b.WriteString(strings.Join(st.Toolsets, ","))
	b.WriteByte('|')
	b.WriteString(st.ProjectID)
	b.WriteByte('|')
	if st.Allowed != nil {
		ids := make([]string, 0, len(st.Allowed))
		for id := range st.Allowed {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		sum := sha256.Sum256([]byte(strings.Join(ids, ",")))
		b.WriteString("chat:")
		b.WriteString(hex.EncodeToString(sum[:8]))
	}
	b.WriteByte('|')
	if st.Single != nil {
		b.WriteString(st.Single.ID)
	}
	b.WriteByte('|')
	b.WriteString(st.discovery)
	return b.String()
}

// aggregateCapabilities are the aggregate endpoint's: listChanged is false everywhere
// because a stateless endpoint cannot notify.
var aggregateCapabilities = &mcp.ServerCapabilities{
	Tools:     &mcp.ToolCapabilities{ListChanged: false},
	Resources: &mcp.ResourceCapabilities{ListChanged: false},
	Prompts:   &mcp.PromptCapabilities{ListChanged: false},
	Logging:   &mcp.LoggingCapabilities{},
}

// newMCPServer returns an empty server with caps whose receiving middleware is the
// protocol guard (outermost) and then extra.
func (g *Gateway) newMCPServer(caps *mcp.ServerCapabilities, extra ...mcp.Middleware) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "agentpack-gateway", Title: "Agentpack MCP Gateway", Version: Version},
		&mcp.ServerOptions{Instructions: builtin.Instructions, Logger: logx.AtLeast(g.log, slog.LevelWarn), Capabilities: caps, SetCacheable: privateCache})
	s.AddReceivingMiddleware(append([]mcp.Middleware{g.guard}, extra...)...)
	return s
}

// privateCache marks every cacheable result (lists, resources/read, server/discover)
// "private": what a server answers depends on the caller's workspace, role, chat and
// project, so no intermediary may serve it to another user (go-sdk's default is "public").
func privateCache(_ context.Context, _ mcp.Request, c *mcp.Cacheable) { c.CacheScope = "private" }

// buildServer registers exactly what st may see.
func (g *Gateway) buildServer(st *requestState) *mcp.Server {
	if st.Single != nil {
		return g.buildSingleServer(st.Single)
	}
	views := g.serverItem(st).appsOf(st)
	caps := aggregateCapabilities
	if settings, ok := views.Capability(); ok {
		caps = withExtension(caps, apps.Extension, settings)
	}
	if settings, ok := skills.Connections(st.State).Capability(); ok {
		caps = withExtension(caps, skills.Extension, settings)
	}
	s := g.newMCPServer(caps)
	for _, b := range g.builtins.All() {
		if builtin.CanSee(st.Principal, b, st.Toolsets) {
			s.AddTool(b.Tool(), g.builtins.Handler(b))
		}
	}
	// Proxied tools are not registered: the edge lists and forwards them (edge.go, package forward).
	g.builtins.AddResourcesAndPrompts(s)
	views.Register(s, g.forward)
	return s
}

// withExtension returns caps advertising extension id with settings
// (capabilities.extensions, SEP-1724); caps itself is never modified (it may be shared).
func withExtension(caps *mcp.ServerCapabilities, id string, settings json.RawMessage) *mcp.ServerCapabilities {
	c := *caps
	c.Extensions = maps.Clone(caps.Extensions)
	if c.Extensions == nil {
		c.Extensions = map[string]any{}
	}
	c.Extensions[id] = settings
	return &c
}

// appsOf returns st's MCP Apps tables (package apps), built once per server key like
// tools/list.
func (it *serverItem) appsOf(st *requestState) *apps.Tables {
	it.appsOnce.Do(func() {
		it.apps = apps.Build(st.State)
		it.grew(it.apps.Weight())
	})
	return it.apps
}

// guard is the protocol guard (docs/DESIGN.md §4): a panic or a non-JSON-RPC
// error escaping method handling becomes -32603 with data.errorId, logged under the same
// id. It is also where a member's call to an admin-only built-in, absent from the
// member's server, is routed to the access check so that it answers FORBIDDEN.
func (g *Gateway) guard(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
		defer func() {
			if p := recover(); p != nil {
				res, err = nil, wire.Internal(ctx, g.log, method, errors.New("panic"), p)
			}
		}()
		if ctr, ok := req.(*mcp.CallToolRequest); ok && method == "tools/call" {
			if st := stateFrom(ctx); st != nil && st.Single == nil && !st.policyDone && g.builtins.Lookup(ctr.Params.Name) != nil {
				// A built-in call the edge did not read: the access policies' decision (policyCall).
				d, err := g.policyCall(ctx, st, g.serverItem(st), ctr.Params.Name, ctr.Params.Arguments)
				if d != nil || err != nil {
					if err != nil {
						return nil, err
					}
					return d.Result(), nil
				}
			}
			if st := stateFrom(ctx); st != nil && st.Single == nil {
				if b := g.builtins.Lookup(ctr.Params.Name); b != nil && !builtin.CanSee(st.Principal, b, nil) {
					return g.builtins.Call(ctx, b, ctr.Params.Arguments)
				}
			}
		}
		res, err = next(ctx, method, req)
		if err != nil {
			var je *jsonrpc.Error
			if !errors.As(err, &je) && !errors.Is(err, context.Canceled) {
				return nil, wire.Internal(ctx, g.log, method, err, nil)
			}
		}
		return res, err
	}
}

// serverCache holds server items bounded by bytes (serverItem.weight; budget.Servers of
// the function's memory, docs/CATALOG.md "Many workspaces per instance"), with an index of
// its keys by workspace so that retiring a workspace's superseded items costs that
// workspace's keys, not a pass over the cache.
type serverCache struct {
	c *otter.Cache[string, *serverItem]

	mu   sync.Mutex                     // guards byWS; never held while calling c
	byWS map[string]map[string]struct{} // workspace → its keys in c
}

// serverItem is what one server key holds: go-sdk's server for built-ins and protocol
// methods, and the edge's tables for proxied tools. Every field is built once, on first
// use; each build adds its estimated bytes to size and re-weighs the item (grew).
type serverItem struct {
	key   string
	cache *serverCache
	// snapSize is the Size of the catalog snapshot the item was made for: its tables
	// point into that snapshot, so the item keeps it alive even after the catalog cache
	// dropped it.
	snapSize int64
	size     atomic.Int64 // estimated bytes of the tables and server built so far

	once sync.Once
	s    *mcp.Server

	callsOnce sync.Once
	calls     map[string]forward.Ref // proxied tools by the name the client calls

	listOnce sync.Once
	pages    [][]byte        // the tools/list result pages; the first without head
	head     []byte          // the first page's shared start: the built-ins (builtinList.head), or nil
	listed   []listing.Entry // instead of pages when the workspace has access policies (filteredList)

	appsOnce sync.Once
	apps     *apps.Tables // MCP Apps views and connections by handle
}

// Estimated bytes of what a server item builds (serverItem.weight): a go-sdk server with
// the built-ins (measured with TestServerItemWeight's heap figures: about 60 kB for the
// built-ins of an admin), an entry of the proxied-call table, and the item itself (the
// apps tables weigh themselves: apps.Tables.Weight).
const (
	itemOverhead     = 512
	builtServerBytes = 64 << 10
	callEntryBytes   = 96
)

// weight is the item's estimated bytes: itself, what it built, and its snapshot.
func (it *serverItem) weight() int64 { return itemOverhead + it.snapSize + it.size.Load() }

// grew adds n estimated bytes to it and re-weighs it in its cache (when still there).
func (it *serverItem) grew(n int64) {
	it.size.Add(n)
	if it.cache != nil {
		it.cache.c.ComputeIfPresent(it.key, func(cur *serverItem) (*serverItem, otter.ComputeOp) {
			if cur != it {
				return cur, otter.CancelOp
			}
			return it, otter.WriteOp
		})
	}
}

func newServerCache(maxBytes int64) *serverCache {
	sc := &serverCache{byWS: map[string]map[string]struct{}{}}
	sc.c = budget.New(maxBytes, (*serverItem).weight, func(key string, _ *serverItem) {
		ws, _, _ := strings.Cut(key, "|")
		sc.mu.Lock()
		if keys := sc.byWS[ws]; keys != nil {
			delete(keys, key)
			if len(keys) == 0 {
				delete(sc.byWS, ws)
			}
		}
		sc.mu.Unlock()
	})
	return sc
}

// get returns key's item, adding an empty one (made for a snapshot of snapSize bytes) when
// absent. Adding an item for a workspace's catalog ETag also drops that workspace's items
// of every other ETag (retireSuperseded): each install, refresh or toggle makes a new
// document, and without this each one left its parsed document, tool table and tools/list
// answer alive until newer keys pushed it out.
func (c *serverCache) get(key string, snapSize int64) *serverItem {
	if it, ok := c.c.GetIfPresent(key); ok {
		return it
	}
	it := &serverItem{key: key, cache: c, snapSize: snapSize}
	// Indexed before it is added, so that an eviction right after the add un-indexes it.
	ws, _, _ := strings.Cut(key, "|")
	c.mu.Lock()
	keys := c.byWS[ws]
	if keys == nil {
		keys = map[string]struct{}{}
		c.byWS[ws] = keys
	}
	keys[key] = struct{}{}
	c.mu.Unlock()
	if cur, added := c.c.SetIfAbsent(key, it); !added {
		return cur // key was there (and indexed) already
	}
	c.retireSuperseded(key)
	return it
}

// retireSuperseded removes the items of key's workspace built for another catalog ETag
// (serverKey starts "<workspace>|<etag>|"). It runs on a miss only and visits that
// workspace's keys only. A request still holding an old snapshot keeps its item (it holds
// the pointer) and, should it arrive after the new document, re-adds its key once, which
// the next request on the new document retires again.
func (c *serverCache) retireSuperseded(key string) {
	ws, rest, ok := strings.Cut(key, "|")
	if !ok {
		return
	}
	etag, _, _ := strings.Cut(rest, "|")
	var old []string
	c.mu.Lock()
	for k := range c.byWS[ws] {
		_, krest, _ := strings.Cut(k, "|")
		if ketag, _, _ := strings.Cut(krest, "|"); ketag != etag {
			old = append(old, k)
		}
	}
	c.mu.Unlock()
	for _, k := range old {
		c.c.Invalidate(k)
	}
}

func (c *serverCache) len() int { return c.c.EstimatedSize() }

// stats returns the server cache's counters (a hit: a request whose key had an item).
func (c *serverCache) stats() budget.Stats { return budget.StatsOf(c.c) }

// keys returns the cached keys, sorted (tests).
func (c *serverCache) keys() []string {
	return slices.Sorted(c.c.Keys())
}

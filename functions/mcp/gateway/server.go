//lint:file-ignore SA1019 MCP logging is deprecated as of 2026-07-28 (SEP-2577); the gateway still relays and advertises it for the revisions before, which define it.

package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/agentpack/gateway/functions/mcp/gateway/builtin"
	"github.com/agentpack/gateway/functions/mcp/gateway/forward"
	"github.com/agentpack/gateway/functions/mcp/gateway/wire"
	lru "github.com/hashicorp/golang-lru/v2"
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
		it.once.Do(func() { it.s = g.buildServer(st) })
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
		st.item = g.servers.get(st.key)
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
		&mcp.ServerOptions{Instructions: instructions, Logger: g.log, Capabilities: caps, SetCacheable: privateCache})
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
	apps := g.serverItem(st).appsOf(st)
	s := g.newMCPServer(withAppsCapability(aggregateCapabilities, apps))
	for _, b := range g.builtins.All() {
		if builtin.CanSee(st.Principal, b, st.Toolsets) {
			s.AddTool(b.Tool(), g.builtins.Handler(b))
		}
	}
	// Proxied tools are not registered: the edge lists and forwards them (edge.go, package forward).
	g.addResourcesAndPrompts(s)
	g.addAppResources(s, apps)
	return s
}

func schemaIsObject(raw json.RawMessage) bool {
	var s struct {
		Type any `json:"type"`
	}
	return json.Unmarshal(raw, &s) == nil && s.Type == "object"
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

// serverCache is a bounded LRU of server items (hashicorp/golang-lru).
type serverCache struct {
	lru *lru.Cache[string, *serverItem]
}

// serverItem is what one server key holds: go-sdk's server for built-ins and protocol
// methods, and the edge's tables for proxied tools. Every field is built once, on first
// use.
type serverItem struct {
	key  string
	once sync.Once
	s    *mcp.Server

	callsOnce sync.Once
	calls     map[string]forward.Ref // proxied tools by the name the client calls

	listOnce sync.Once
	pages    [][]byte // the tools/list result pages

	appsOnce sync.Once
	apps     *appTables // MCP Apps views and connections by handle (apps.go)
}

func newServerCache(max int) *serverCache {
	c, err := lru.New[string, *serverItem](max)
	if err != nil {
		panic(err) // max ≤ 0: a programming error (New defaults it to 256)
	}
	return &serverCache{lru: c}
}

// get returns key's item, adding an empty one (and evicting the least recently used)
// when absent. Adding an item for a workspace's catalog ETag also drops that workspace's
// items of every other ETag (retireSuperseded): each install, refresh or toggle makes a
// new document, and without this each one left its parsed document, tool table and
// tools/list answer alive until 256 newer keys pushed it out.
func (c *serverCache) get(key string) *serverItem {
	if it, ok := c.lru.Get(key); ok {
		return it
	}
	it := &serverItem{key: key}
	if prev, found, _ := c.lru.PeekOrAdd(key, it); found {
		return prev
	}
	c.retireSuperseded(key)
	return it
}

// retireSuperseded removes the items of key's workspace built for another catalog ETag
// (serverKey starts "<workspace>|<etag>|"). It runs on a miss only, so its pass over the
// cache (at most MaxServers keys) is paid once per new key, not per request. A request
// still holding an old snapshot keeps its item (it holds the pointer) and, should it
// arrive after the new document, re-adds its key once, which the next request on the new
// document retires again.
func (c *serverCache) retireSuperseded(key string) {
	ws, rest, ok := strings.Cut(key, "|")
	if !ok {
		return
	}
	etag, _, _ := strings.Cut(rest, "|")
	for _, k := range c.lru.Keys() {
		kws, krest, _ := strings.Cut(k, "|")
		if kws != ws {
			continue
		}
		if ketag, _, _ := strings.Cut(krest, "|"); ketag != etag {
			c.lru.Remove(k)
		}
	}
}

func (c *serverCache) len() int { return c.lru.Len() }

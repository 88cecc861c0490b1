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

	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/httpapi"
	"github.com/agentpack/gateway/shared/logx"
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
// toolsets, project, chat resolution and endpoint. Nothing per-principal beyond the role
// class is in a server, so two principals with one key may share it.
func serverKey(st *requestState) string {
	var b strings.Builder
	b.WriteString(st.workspace)
	b.WriteByte('|')
	b.WriteString(st.snap.ETag)
	b.WriteByte('|')
	b.WriteString(roleClass(st.principal))
	b.WriteByte('|')
	b.WriteString(strings.Join(st.toolsets, ","))
	b.WriteByte('|')
	b.WriteString(st.projectID)
	b.WriteByte('|')
	if st.allowed != nil {
		ids := make([]string, 0, len(st.allowed))
		for id := range st.allowed {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		sum := sha256.Sum256([]byte(strings.Join(ids, ",")))
		b.WriteString("chat:")
		b.WriteString(hex.EncodeToString(sum[:8]))
	}
	b.WriteByte('|')
	if st.single != nil {
		b.WriteString(st.single.ID)
	}
	return b.String()
}

// connectionVisible reports whether a catalog connection's tools are served to st in
// the aggregate endpoint: global and workspace connections always, project-scoped ones
// only for that project, and with a chat only the resolved set (docs/DESIGN.md §7).
func connectionVisible(st *requestState, c *catalog.Connection) bool {
	if c.Scope == "project" && c.ProjectID != st.projectID {
		return false
	}
	return st.allowed == nil || st.allowed[c.ID]
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
	if st.single != nil {
		return g.buildSingleServer(st.single)
	}
	s := g.newMCPServer(aggregateCapabilities)
	for _, b := range g.builtins {
		if canSee(st.principal, b, st.toolsets) {
			s.AddTool(b.tool, g.builtinHandler(b))
		}
	}
	// Proxied tools are not registered: the edge lists and forwards them (forward.go).
	g.addResourcesAndPrompts(s)
	return s
}

func schemaIsObject(raw json.RawMessage) bool {
	var s struct {
		Type any `json:"type"`
	}
	return json.Unmarshal(raw, &s) == nil && s.Type == "object"
}

// guard is the protocol guard (seed withInternalErrorGuard): a panic or a non-JSON-RPC
// error escaping method handling becomes -32603 with data.errorId, logged under the same
// id. It is also where a member's call to an admin-only built-in, absent from the
// member's server, is routed to the access check so that it answers FORBIDDEN.
func (g *Gateway) guard(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
		defer func() {
			if p := recover(); p != nil {
				res, err = nil, g.internalError(ctx, method, errors.New("panic"), p)
			}
		}()
		if ctr, ok := req.(*mcp.CallToolRequest); ok && method == "tools/call" {
			if st := stateFrom(ctx); st != nil && st.single == nil {
				if b := g.byName[ctr.Params.Name]; b != nil && !canSee(st.principal, b, nil) {
					return g.callBuiltin(ctx, b, ctr)
				}
			}
		}
		res, err = next(ctx, method, req)
		if err != nil {
			var je *jsonrpc.Error
			if !errors.As(err, &je) && !errors.Is(err, context.Canceled) {
				return nil, g.internalError(ctx, method, err, nil)
			}
		}
		return res, err
	}
}

func (g *Gateway) internalError(ctx context.Context, method string, err error, panicValue any) error {
	id := httpapi.NewID()
	logx.Annotate(ctx, logx.FieldErrorID, id)
	logx.Annotate(ctx, logx.FieldOutcome, "error")
	if panicValue != nil {
		g.log.ErrorContext(ctx, "panic in MCP method", "error_id", id, "method", method, "panic", panicValue)
	} else {
		g.log.ErrorContext(ctx, "MCP method failed", "error_id", id, "method", method, "err", err)
	}
	data, _ := json.Marshal(map[string]string{"errorId": id})
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error", Data: data}
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
	calls     map[string]proxiedRef // proxied tools by the name the client calls

	listOnce sync.Once
	pages    [][]byte // the tools/list result pages
}

func newServerCache(max int) *serverCache {
	c, err := lru.New[string, *serverItem](max)
	if err != nil {
		panic(err) // max ≤ 0: a programming error (New defaults it to 256)
	}
	return &serverCache{lru: c}
}

// get returns key's item, adding an empty one (and evicting the least recently used)
// when absent.
func (c *serverCache) get(key string) *serverItem {
	if it, ok := c.lru.Get(key); ok {
		return it
	}
	it := &serverItem{key: key}
	if prev, found, _ := c.lru.PeekOrAdd(key, it); found {
		return prev
	}
	return it
}

func (c *serverCache) len() int { return c.lru.Len() }

package gateway

import (
	"container/list"
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
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sync/singleflight"
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
		st.key = serverKey(st)
		st.item = g.servers.get(st.key, func() *mcp.Server { return g.buildServer(st) })
		st.server = st.item.s
	}
	return st.server
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
// only for that project, and with a chat only the resolved set (DESIGN §7).
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
	// Tools without an object schema are skipped (AddTool panics on them; the refresh
	// already logged them). The tools/call fast path looks tools up in the same list.
	proxiedTools(st, func(name string, c *catalog.Connection, t *catalog.Tool) {
		s.AddTool(proxiedTool(t, name), g.proxiedHandler(c, t))
	})
	g.addResourcesAndPrompts(s)
	return s
}

// proxiedTool is the definition a client sees for an upstream tool, under name.
func proxiedTool(t *catalog.Tool, name string) *mcp.Tool {
	mt := &mcp.Tool{Name: name, Title: t.Title, Description: t.Description, InputSchema: t.InputSchema}
	if len(t.OutputSchema) > 0 && schemaIsObject(t.OutputSchema) {
		mt.OutputSchema = t.OutputSchema
	}
	if len(t.Annotations) > 0 {
		var a mcp.ToolAnnotations
		if json.Unmarshal(t.Annotations, &a) == nil {
			mt.Annotations = &a
		}
	}
	return mt
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
	if panicValue != nil {
		g.log.ErrorContext(ctx, "panic in MCP method", "error_id", id, "method", method, "panic", panicValue)
	} else {
		g.log.ErrorContext(ctx, "MCP method failed", "error_id", id, "method", method, "err", err)
	}
	data, _ := json.Marshal(map[string]string{"errorId": id})
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error", Data: data}
}

// serverCache is a bounded LRU of built servers with per-key single flight.
type serverCache struct {
	mu    sync.Mutex
	max   int
	ll    *list.List
	items map[string]*list.Element
	group singleflight.Group
}

type serverItem struct {
	key   string
	s     *mcp.Server
	lists listCache // go-sdk's own tools/list answers, replayed (list.go)
	calls callTable // proxied tools by name and tools/call answer headers (call.go)
}

func newServerCache(max int) *serverCache {
	return &serverCache{max: max, ll: list.New(), items: map[string]*list.Element{}}
}

func (c *serverCache) get(key string, build func() *mcp.Server) *serverItem {
	c.mu.Lock()
	if e, ok := c.items[key]; ok {
		c.ll.MoveToFront(e)
		it := e.Value.(*serverItem)
		c.mu.Unlock()
		return it
	}
	c.mu.Unlock()
	v, _, _ := c.group.Do(key, func() (any, error) {
		s := build()
		c.mu.Lock()
		defer c.mu.Unlock()
		if e, ok := c.items[key]; ok {
			return e.Value.(*serverItem), nil
		}
		it := &serverItem{key: key, s: s}
		c.items[key] = c.ll.PushFront(it)
		for c.ll.Len() > c.max {
			old := c.ll.Back()
			c.ll.Remove(old)
			delete(c.items, old.Value.(*serverItem).key)
		}
		return it, nil
	})
	return v.(*serverItem)
}

func (c *serverCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ll.Len()
}

package gateway

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/agentpack/gateway/functions/mcp/gateway/access"
	"github.com/agentpack/gateway/functions/mcp/gateway/request"
	"github.com/agentpack/gateway/functions/mcp/gateway/response"
	"github.com/agentpack/gateway/functions/mcp/gateway/web"
	"github.com/agentpack/gateway/functions/mcp/gateway/wire"
	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/httpapi"
	"github.com/agentpack/gateway/shared/logx"
	"github.com/agentpack/gateway/shared/pins"
	"github.com/agentpack/gateway/shared/text"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// requestState is one MCP request at the edge: what it resolved (request.State, which
// the built-ins and the forwarding path read) plus the edge's memos. It travels in the
// request context; cached servers read per-request data only from here.
type requestState struct {
	*request.State
	key    string
	server *mcp.Server // memoised: go-sdk calls getServer twice per POST
	item   *serverItem // server's cache item
	// discovery is the tools/list mode the client asked for ("" = the workspace's
	// threshold decides; discovery.go).
	discovery string
	// policyDone: the access policies' call decision was made for this request (policyCall).
	policyDone bool
}

type stateKey struct{}

func stateFrom(ctx context.Context) *requestState {
	s, _ := ctx.Value(stateKey{}).(*requestState)
	return s
}

// Handler returns the gateway's routes: POST /mcp, POST /mcp/{workspaceId},
// POST /mcp/{workspaceId}/servers/{connection}, the RFC 9728 metadata under
// /.well-known/oauth-protected-resource, and GET /health.
func (g *Gateway) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", g.serveMCP)
	mux.HandleFunc("/mcp/{workspaceId}", g.serveMCP)
	mux.HandleFunc("/mcp/{workspaceId}/servers/{connection}", g.serveMCP)
	mux.HandleFunc("/mcp/{rest...}", g.site.ServeNoEndpoint) // a JSON answer, not text
	mux.HandleFunc("GET /.well-known/oauth-protected-resource", g.site.ServeResourceMetadata)
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/{rest...}", g.site.ServeResourceMetadata)
	mux.HandleFunc("GET /health", g.serveHealth)
	return httpapi.Recover(g.log, mux)
}

func (g *Gateway) serveMCP(w http.ResponseWriter, r *http.Request) {
	g.emitCacheMetrics()
	// The Lambda request id when there is one (shared/lambdaapp), so that the audit rows,
	// logs and the access line join Lambda's and API Gateway's own records.
	reqID := logx.RequestID(r.Context())
	if reqID == "" {
		reqID = httpapi.NewID()
	}
	w.Header().Set("X-Request-Id", reqID)
	ctx := logx.WithRequestID(r.Context(), reqID)
	if !g.site.OriginAllowed(r) {
		wire.WriteInvalidRequest(w, http.StatusForbidden, "origin not allowed")
		return
	}
	web.CORS(w, r)
	switch r.Method {
	case http.MethodOptions:
		w.WriteHeader(http.StatusNoContent)
		return
	case http.MethodPost:
	default:
		w.Header().Set("Allow", "POST, OPTIONS")
		wire.WriteInvalidRequest(w, http.StatusMethodNotAllowed, "this endpoint is stateless: use POST")
		return
	}
	if !jsonContentType(r.Header.Get("Content-Type")) {
		wire.WriteInvalidRequest(w, http.StatusUnsupportedMediaType, "Content-Type must be application/json")
		return
	}
	okJSON, okSSE := response.Acceptable(r.Header.Values("Accept"))
	if !okJSON && !okSSE {
		wire.WriteInvalidRequest(w, http.StatusNotAcceptable, "Accept must allow application/json or text/event-stream")
		return
	}
	// go-sdk requires both types listed; the gateway answers in the one the client allows.
	r.Header.Set("Accept", "application/json, text/event-stream")
	st, err := g.resolve(ctx, r)
	if err == nil && st.Snapshot.Pending() && !firstPageRequest(r, st) {
		err = completeSnapshot(ctx, st)
	}
	if err != nil {
		g.writeResolveError(w, r, err)
		return
	}
	st.RequestID = reqID
	st.Version = r.Header.Get("Mcp-Protocol-Version")
	st.NewProtocol = st.Version >= "2026-07-28"
	if dl, ok := ctx.Deadline(); ok {
		st.Deadline = dl
	}
	st.AcceptsSSE = okSSE
	st.Relay = &request.Relayed{}                       // forward/relay.go decides what is relayed on which endpoint
	st.Listable = access.Listable(g.builtins, st.State) // the access policies' "list" decision
	ctx = request.With(context.WithValue(ctx, stateKey{}, st), st.State)
	rw := response.New(w, maxResponseBytes)
	g.serveRPC(rw, r.WithContext(ctx), st)
	var events [][]byte
	if st.Relay != nil {
		events = st.Relay.Take()
	}
	rw.Relay(events, okSSE && !okJSON)
	rw.Finish()
}

// jsonContentType reports whether a POST's Content-Type is application/json, parameters
// (charset) allowed: the body of every Streamable HTTP POST is one JSON-RPC message (MCP
// "Transports", Sending Messages), and go-sdk's handler answers 415 to anything else. The
// edge answers its own methods before go-sdk sees the request, so it checks here for all of
// them. A missing Content-Type is refused too, as go-sdk does.
func jsonContentType(v string) bool {
	mt, _, err := mime.ParseMediaType(v)
	return err == nil && mt == "application/json"
}

// resolve authenticates the caller and resolves workspace, project, chat, toolsets and
// the catalog snapshot (docs/DESIGN.md §4, §8).
func (g *Gateway) resolve(ctx context.Context, r *http.Request) (*requestState, error) {
	p, err := g.authenticate(ctx, r)
	if err != nil {
		return nil, err
	}
	st := &requestState{State: &request.State{Principal: p}}
	ws := r.PathValue("workspaceId")
	if ws == "" {
		ws = r.Header.Get("X-Workspace-Id")
	}
	if ws == "" {
		if len(p.Workspaces) != 1 {
			return nil, apperr.New(apperr.Validation, "no workspace selected").
				WithHint("send X-Workspace-Id or use /mcp/{workspaceId}: this token has access to several workspaces")
		}
		ws = p.Workspaces[0]
	}
	logx.Annotate(ctx, logx.FieldPrincipal, p.Subject)
	if !db.IsUUID(ws) || !p.InWorkspace(ws) {
		return nil, web.NoAccess(p, ws, g.site.BaseURL(r))
	}
	st.Workspace = ws
	logx.Annotate(ctx, logx.FieldWorkspace, ws)
	if ts := cmp.Or(r.Header.Get("X-MCP-Toolsets"), r.URL.Query().Get("toolsets")); ts != "" {
		for _, t := range strings.Split(ts, ",") {
			if t = strings.TrimSpace(t); t != "" {
				st.Toolsets = append(st.Toolsets, t)
			}
		}
		slices.Sort(st.Toolsets)
		st.Toolsets = slices.Compact(st.Toolsets)
		// Only known names: the toolsets are part of the server cache key, which a client
		// must not be able to grow at will.
		for _, t := range st.Toolsets {
			if !g.builtins.KnownToolset(t) {
				return nil, apperr.New(apperr.Validation, "unknown toolset %q", text.Clip(t, 64)).
					WithHint("agentpack_toolsets_list lists the toolsets")
			}
		}
	}
	if st.discovery, err = discoveryMode(r); err != nil {
		return nil, err
	}
	st.ProjectID = cmp.Or(r.Header.Get("X-Project-Id"), r.URL.Query().Get("project"))
	if st.ProjectID != "" && !db.IsUUID(st.ProjectID) {
		return nil, apperr.New(apperr.Validation, "X-Project-Id must be a project id (UUID)")
	}
	// Lazy: a cold snapshot may still be reading its parts (catalog.Cache.GetLazy); only a
	// first tools/list page is served from it as it is (serveMCP, firstPage), everything
	// else completes it first.
	if st.Snapshot, err = g.o.Catalog.GetLazy(ctx, ws); err != nil {
		return nil, apperr.Wrap(err, apperr.Unavailable, "catalog unavailable")
	}
	st.ChatID = cmp.Or(r.Header.Get("X-Chat-Id"), r.URL.Query().Get("chat"))
	if st.ChatID != "" || r.PathValue("connection") != "" {
		if err := completeSnapshot(ctx, st); err != nil {
			return nil, err
		}
	}
	if st.ChatID != "" {
		if st.Allowed, err = g.resolveChat(ctx, st); err != nil {
			return nil, err
		}
	}
	if ref := r.PathValue("connection"); ref != "" {
		c, ok := st.Snapshot.ConnectionByRef(ref)
		if !ok || !st.Visible(c) {
			return nil, web.UnknownServer(st.State, ref)
		}
		st.Single = c
	}
	return st, nil
}

// completeSnapshot waits until st's catalog snapshot is complete (catalog.Snapshot.Complete):
// its failure is the request's "catalog unavailable", as a failed load is.
func completeSnapshot(ctx context.Context, st *requestState) error {
	if err := st.Snapshot.Complete(ctx); err != nil {
		return apperr.Wrap(err, apperr.Unavailable, "catalog unavailable")
	}
	return nil
}

// firstPageRequest reports whether r (whose body it reads and puts back, bounded as
// serveRPC reads it) may be served from st's pending snapshot as it is: a tools/list
// without a cursor on the aggregate endpoint, with no chat, in a workspace whose index
// holds no access policies (Gateway.firstPage). Anything else waits for the whole
// catalog.
func firstPageRequest(r *http.Request, st *requestState) bool {
	if st.Single != nil || st.ChatID != "" {
		return false
	}
	if head := st.Snapshot.Head(); head == nil || head.Policies != nil {
		return false
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBytes+1))
	r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), r.Body))
	if err != nil || len(body) > maxRequestBytes {
		return false
	}
	var msg struct {
		Method string `json:"method"`
		Params *struct {
			Cursor *string `json:"cursor"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.Method != "tools/list" {
		return false
	}
	return msg.Params == nil || msg.Params.Cursor == nil || *msg.Params.Cursor == ""
}

// resolveChat returns the connection ids a chat may use (docs/DESIGN.md §7), checking that the
// chat belongs to the request's workspace.
func (g *Gateway) resolveChat(ctx context.Context, st *requestState) (map[string]bool, error) {
	return pins.ChatAllowed(ctx, g.o.Pool, g.log, st.Snapshot, st.Workspace, st.ChatID)
}

func (g *Gateway) authenticate(ctx context.Context, r *http.Request) (*auth.Principal, error) {
	tok := httpapi.BearerToken(r)
	if tok == "" {
		if g.o.UnauthenticatedPrincipal != nil && r.Header.Get("Authorization") == "" {
			return g.o.UnauthenticatedPrincipal, nil
		}
		return nil, apperr.New(apperr.Unauthenticated, "missing bearer token")
	}
	p, err := g.o.Verifier.VerifyResource(ctx, tok, g.site.BaseURL(r)+"/mcp")
	if err != nil || p.Grant == "" {
		return p, err
	}
	// A token of the gateway's own authorization server: its grant must still stand, so
	// that a revoked client's next call is challenged again (docs/AUTH.md "Revocation").
	if !g.o.OwnAuthServer || g.o.Grants == nil {
		return nil, apperr.New(apperr.Unauthenticated, "tokens of this gateway's authorization server are not accepted here")
	}
	ok, err := g.o.Grants.Active(ctx, p.Grant)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, apperr.New(apperr.Unauthenticated, "the authorization behind this token was revoked")
	}
	return p, nil
}

func (g *Gateway) writeResolveError(w http.ResponseWriter, r *http.Request, err error) {
	e := apperr.Public(err)
	if e.Code == apperr.Unauthenticated {
		w.Header().Set("WWW-Authenticate", web.BearerChallenge(err, e.Message, g.site.ResourceMetadataURL(r)))
	}
	id := ""
	if e.Code.HTTPStatus() >= 500 {
		// The client gets the id the log line carries (the gateway's fault, not the
		// request's).
		id = httpapi.NewID()
		logx.Annotate(r.Context(), logx.FieldErrorID, id)
		g.log.ErrorContext(r.Context(), "mcp request failed", "error_id", id, "err", err)
	}
	wire.Refuse(w, err, id)
}

// serveHealth reports liveness, the database and the catalog cache without secrets.
func (g *Gateway) serveHealth(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	out := map[string]any{"status": "ok", "version": Version, "builtinTools": len(g.builtins.All()),
		"cachedServers": g.servers.len()}
	if err := g.o.Pool.Ping(ctx); err != nil {
		out["status"], out["database"] = "degraded", "unavailable"
	} else {
		out["database"] = "ok"
	}
	// Only aggregate figures: /health is unauthenticated, so no workspace is named.
	out["catalog"] = g.o.Catalog.Health()
	out["caches"] = g.CacheStats()
	status := http.StatusOK
	if out["status"] != "ok" {
		status = http.StatusServiceUnavailable
	}
	httpapi.JSON(w, status, out)
}

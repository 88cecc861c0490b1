package gateway

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/agentpack/gateway/functions/mcp/gateway/access"
	"github.com/agentpack/gateway/functions/mcp/gateway/request"
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
	mux.HandleFunc("/mcp/{rest...}", g.serveNoEndpoint) // notfound.go: a JSON answer, not text
	mux.HandleFunc("GET /.well-known/oauth-protected-resource", g.serveResourceMetadata)
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/{rest...}", g.serveResourceMetadata)
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
	if !g.originAllowed(r) {
		wire.WriteInvalidRequest(w, http.StatusForbidden, "origin not allowed")
		return
	}
	g.cors(w, r)
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
	okJSON, okSSE := acceptable(r.Header.Values("Accept"))
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
	rw := &limitedWriter{ResponseWriter: w, limit: maxResponseBytes}
	g.serveRPC(rw, r.WithContext(ctx), st)
	var events [][]byte
	if st.Relay != nil {
		events = st.Relay.Take()
	}
	rw.relay(events, okSSE && !okJSON)
	rw.finish()
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
		return nil, noAccess(p, ws, g.baseURL(r))
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
			return nil, unknownServer(st, ref)
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
	p, err := g.o.Verifier.VerifyResource(ctx, tok, g.baseURL(r)+"/mcp")
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
		w.Header().Set("WWW-Authenticate", bearerChallenge(err, e.Message, g.resourceMetadataURL(r)))
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

// bearerChallenge is the WWW-Authenticate value of a 401 (RFC 6750 §3, RFC 9728 §5.1): a
// token that was presented and refused (auth.ErrInvalidToken in err) adds
// error="invalid_token" and error_description=msg (Verify's message: expired at when, or
// what is wrong); a missing token gets no error code (RFC 6750 §3.1).
func bearerChallenge(err error, msg, metadataURL string) string {
	v := `Bearer resource_metadata="` + metadataURL + `"`
	if errors.Is(err, auth.ErrInvalidToken) {
		// RFC 6750 §3: error_description is printable ASCII without '"' and '\'.
		desc := strings.Map(func(r rune) rune {
			if r < 0x20 || r > 0x7e || r == '"' || r == '\\' {
				return -1
			}
			return r
		}, msg)
		v += `, error="invalid_token", error_description="` + desc + `"`
	}
	return v
}

// noAccess is the 403 for a token without access to workspace ws: it names the workspaces
// the token does carry and the endpoint URL to use (base + /mcp/<id>), so that a client
// configured with the wrong id sees the right one (in the message: the JSON-RPC answer
// carries no hint). ws is echoed only when it is a UUID.
func noAccess(p *auth.Principal, ws, base string) *apperr.Error {
	which := "this workspace"
	if db.IsUUID(ws) {
		which = "workspace " + ws
	}
	switch len(p.Workspaces) {
	case 0:
		return apperr.New(apperr.Forbidden, "no access to %s: this token carries no workspace (ask an admin for a token of the workspace)", which)
	case 1:
		return apperr.New(apperr.Forbidden, "no access to %s: this token is for workspace %s; use %s/mcp/%s", which, p.Workspaces[0], base, p.Workspaces[0])
	}
	list := p.Workspaces
	if len(list) > 10 {
		list = list[:10]
	}
	return apperr.New(apperr.Forbidden, "no access to %s: this token is for workspaces %s; use %s/mcp/<one of them>", which, strings.Join(list, ", "), base)
}

// originAllowed is the DNS-rebinding and CSRF guard. A request that arrived on a
// loopback socket (a local run: `make run`, tests) must name a loopback Host, so that a
// page on evil.example whose DNS points at 127.0.0.1 cannot reach the local gateway; there
// a loopback Origin is also accepted. Behind API Gateway there is no loopback socket and
// only AllowedOrigins pass. Requests without an Origin header are not from a browser page.
func (g *Gateway) originAllowed(r *http.Request) bool {
	loopback := onLoopback(r)
	if loopback && !isLoopbackHost(r.Host) {
		return false
	}
	o := r.Header.Get("Origin")
	if o == "" || slices.Contains(g.o.AllowedOrigins, o) {
		return true
	}
	if loopback {
		if u, err := url.Parse(o); err == nil && (u.Scheme == "http" || u.Scheme == "https") && isLoopbackHost(u.Host) {
			return true
		}
	}
	return false
}

// onLoopback reports whether r arrived on a loopback listener.
func onLoopback(r *http.Request) bool {
	a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || a == nil {
		return false
	}
	ap, err := netip.ParseAddrPort(a.String())
	return err == nil && ap.Addr().Unmap().IsLoopback()
}

// isLoopbackHost reports whether hostport (a Host header or URL host) names localhost,
// 127.0.0.1 or [::1], with or without a port.
func isLoopbackHost(hostport string) bool {
	h := hostport
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		h = host
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(h)
	return err == nil && ip.Unmap().IsLoopback()
}

func (g *Gateway) cors(w http.ResponseWriter, r *http.Request) {
	o := r.Header.Get("Origin")
	if o == "" {
		return
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", o)
	h.Add("Vary", "Origin")
	h.Set("Access-Control-Allow-Methods", "POST, OPTIONS")
	h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Accept, Mcp-Protocol-Version, Mcp-Method, Mcp-Name, X-Workspace-Id, X-Project-Id, X-Chat-Id, X-MCP-Toolsets, X-MCP-Discovery")
	h.Set("Access-Control-Expose-Headers", "WWW-Authenticate, X-Request-Id")
	h.Set("Access-Control-Max-Age", "600")
}

func (g *Gateway) baseURL(r *http.Request) string {
	if g.o.PublicBaseURL != "" {
		return g.o.PublicBaseURL
	}
	scheme := "http"
	if r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https" {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// resourceMetadataURL is the RFC 9728 document of the MCP URL r asked for: each MCP URL has
// its own, path-inserted (RFC 9728 §3.1), whose resource is exactly that URL, so that a client
// that checks the document against the URL it was given (RFC 9728 §3.3) accepts it. A path
// that is not one of the gateway's MCP URLs points at the gateway-wide /mcp document.
func (g *Gateway) resourceMetadataURL(r *http.Request) string {
	p, _, ok := auth.MCPURLPath(r.URL.EscapedPath())
	if !ok {
		p = auth.MCPPath
	}
	return g.baseURL(r) + resourceMetadataPrefix + p
}

const resourceMetadataPrefix = "/.well-known/oauth-protected-resource"

// serveResourceMetadata serves OAuth 2.0 Protected Resource Metadata (RFC 9728) for each MCP
// URL (auth.MCPURLPath): /.well-known/oauth-protected-resource/mcp/{workspaceId} names
// resource <base>/mcp/{workspaceId}, and so on; the bare document (no path) names the
// gateway-wide <base>/mcp, as it always has. Any other path is 404: no document is made up for a
// URL the gateway does not serve.
func (g *Gateway) serveResourceMetadata(w http.ResponseWriter, r *http.Request) {
	base := g.baseURL(r)
	p := strings.TrimPrefix(r.URL.EscapedPath(), resourceMetadataPrefix)
	if p == "" || p == "/" {
		p = auth.MCPPath
	}
	canonical, _, ok := auth.MCPURLPath(p)
	if !ok {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		httpapi.JSON(w, http.StatusNotFound, map[string]any{"error": "not_found",
			"error_description": "no protected resource metadata at this path: the gateway's MCP URLs are /mcp, /mcp/{workspaceId} and /mcp/{workspaceId}/servers/{connection}"})
		return
	}
	md := map[string]any{
		"resource":                 base + canonical,
		"bearer_methods_supported": []string{"header"},
		"resource_name":            "Agentpack MCP Gateway",
	}
	if g.o.AuthServerURL != "" {
		md["authorization_servers"] = []string{g.o.AuthServerURL}
	} else if g.o.OwnAuthServer {
		md["authorization_servers"] = []string{base}
		md["scopes_supported"] = []string{"mcp"}
	}
	w.Header().Set("Access-Control-Allow-Origin", "*")
	httpapi.JSON(w, http.StatusOK, md)
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

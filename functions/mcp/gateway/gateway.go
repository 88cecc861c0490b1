package gateway

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/agentpack/gateway/functions/mcp/gateway/access"
	"github.com/agentpack/gateway/functions/mcp/gateway/apps"
	"github.com/agentpack/gateway/functions/mcp/gateway/audit"
	"github.com/agentpack/gateway/functions/mcp/gateway/builtin"
	"github.com/agentpack/gateway/functions/mcp/gateway/forward"
	"github.com/agentpack/gateway/functions/mcp/gateway/metrics"
	"github.com/agentpack/gateway/functions/mcp/gateway/skills"
	"github.com/agentpack/gateway/functions/mcp/gateway/tasks"
	"github.com/agentpack/gateway/functions/mcp/gateway/web"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/budget"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/mcpclient"
	"github.com/agentpack/gateway/shared/ratelimit"
	"github.com/agentpack/gateway/shared/services"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Version is the gateway's implementation version reported to MCP clients.
const Version = "0.1.0"

// Options configure a Gateway. Pool, Catalog, Upstreams and Verifier are required.
type Options struct {
	Pool      *db.Pool
	Catalog   *catalog.Cache
	Upstreams *mcpclient.Pool
	Verifier  *auth.Verifier
	// Services are what the built-ins and the forwarder act through (services.NewServices, built
	// once per process); a nil Services.Connections leaves the connection built-ins
	// UNAVAILABLE.
	services.Services
	Logger *slog.Logger
	// Metrics receives one EMF line per tool call (os.Stdout in Lambda); nil disables.
	Metrics io.Writer
	// PublicBaseURL is the gateway's external base URL (for RFC 9728 metadata); when
	// empty it is derived from the request.
	PublicBaseURL string
	// AuthServerURL is the OAuth authorization server named in the protected resource
	// metadata. When empty and OwnAuthServer is set, the metadata names the gateway's own
	// authorization server (its base URL: functions/marketplace/authserver, docs/AUTH.md).
	AuthServerURL string
	// OwnAuthServer says the gateway's own authorization server runs on this origin and
	// the Verifier accepts its tokens (auth.Options.Issued); Services.Grants then answers
	// whether the grant behind such a token still stands. Off, every token of that server
	// is refused.
	OwnAuthServer bool
	// AllowedOrigins lists browser origins allowed to call /mcp; a request with any other
	// Origin is refused with 403 (DNS-rebinding / CSRF protection).
	AllowedOrigins []string
	// CallTimeout bounds a proxied call (default 25 s, under API Gateway's 29 s).
	CallTimeout time.Duration
	// UnauthenticatedPrincipal, when set, is used for requests without a token (local
	// conformance runs only; config refuses it in deployed mode).
	UnauthenticatedPrincipal *auth.Principal
	// ServerCacheBytes bounds the server cache in estimated bytes (serverItem.weight); 0:
	// budget.FromEnv().Servers, a share of the function's memory (docs/CATALOG.md "Many
	// workspaces per instance").
	ServerCacheBytes int64
	// TargetCacheBytes bounds the forwarder's cache of connection rows in estimated bytes;
	// 0: budget.FromEnv().Targets.
	TargetCacheBytes int64
	// StartTask starts a gateway task's worker out of the request (package tasks); nil runs
	// it on a goroutine of this process (make run, tests). In Lambda: an asynchronous
	// invocation of the same function whose handler calls RunTask.
	StartTask func(ctx context.Context, job tasks.Job) error
	// TaskTimeout bounds a task's run (default 14 min, under Lambda's 15-minute maximum).
	TaskTimeout time.Duration
}

// Gateway serves the MCP endpoints.
type Gateway struct {
	o        Options
	log      *slog.Logger
	builtins *builtin.Set
	forward  *forward.Forwarder
	servers  *serverCache
	metrics  *metrics.EMF
	mcp      *mcp.StreamableHTTPHandler
	// inflight: inflightKey → the cancel functions of the forwarded requests with that key
	// (edge.go track / cancelled)
	inflightMu sync.Mutex
	inflight   map[string][]*context.CancelFunc
	tasks      *tasks.Service
	skills     *skills.Service // the Skills extension on the aggregate endpoint
	// audit is the audit trail: rows are written after the answer (audit package doc); the
	// access policies' denials go there too (package access)
	audit *audit.Trail
	// policies asks the access policies' "call" decision (package access; policyCall)
	policies *access.Checker
	// site is the HTTP face apart from MCP: Origin guard, base URL, RFC 9728 (package web)
	site *web.Site
	// cacheMetrics: the caches' counters last written as EMF (caches.go)
	cacheMetrics cacheMetrics
	// builtinLists: role class and toolsets → *builtinList, the built-ins' tools/list
	// entries made once and shared by every server item of that class (tools.go)
	builtinLists sync.Map
}

// New builds a gateway. It compiles every built-in definition once; an invalid
// definition is a programming error returned here.
func New(o Options) (*Gateway, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.CallTimeout == 0 {
		o.CallTimeout = 25 * time.Second
	}
	if o.ServerCacheBytes <= 0 || o.TargetCacheBytes <= 0 {
		b := budget.FromEnv()
		if o.ServerCacheBytes <= 0 {
			o.ServerCacheBytes = b.Servers
		}
		if o.TargetCacheBytes <= 0 {
			o.TargetCacheBytes = b.Targets
		}
	}
	if o.TaskTimeout == 0 {
		o.TaskTimeout = 14 * time.Minute
	}
	em := metrics.New(o.Metrics)
	auditor := audit.NewTrail(audit.Options{Pool: o.Pool, Logger: o.Logger})
	set, err := builtin.New(builtin.Options{Services: o.Services, Pool: o.Pool, Logger: o.Logger,
		Metrics: em, Audit: auditor})
	if err != nil {
		return nil, err
	}
	g := &Gateway{o: o, log: o.Logger, builtins: set, metrics: em, audit: auditor, servers: newServerCache(o.ServerCacheBytes),
		forward: forward.New(forward.Options{Pool: o.Pool, Upstreams: o.Upstreams, Connections: o.Connections,
			Logger: o.Logger, Metrics: em, Audit: auditor, CallTimeout: o.CallTimeout,
			Limiter: &ratelimit.Limiter{Pool: o.Pool}, TargetCacheBytes: o.TargetCacheBytes})}
	g.tasks = tasks.New(tasks.Options{Pool: o.Pool, Forward: g.forward, Builtins: set, Metrics: em,
		Logger: o.Logger, CallTimeout: o.CallTimeout, Timeout: o.TaskTimeout, Start: o.StartTask,
		ResultView: apps.ResultView})
	g.skills = skills.New(g.forward, o.Logger)
	g.policies = &access.Checker{Builtins: set, Audit: auditor, Metrics: em, Log: o.Logger}
	g.site = &web.Site{PublicBaseURL: o.PublicBaseURL, AllowedOrigins: o.AllowedOrigins,
		AuthServerURL: o.AuthServerURL, OwnAuthServer: o.OwnAuthServer}
	g.mcp = mcp.NewStreamableHTTPHandler(g.getServer, &mcp.StreamableHTTPOptions{
		Stateless:                  true,
		JSONResponse:               true,
		Logger:                     o.Logger,
		MaxRequestBodyBytes:        maxRequestBytes,
		DisableLocalhostProtection: true, // Host/Origin are checked in ServeHTTP for every listener
	})
	return g, nil
}

// maxRequestBytes bounds an MCP request body (1 MiB).
const maxRequestBytes = 1 << 20

// maxResponseBytes bounds an MCP response body: Lambda's synchronous payload limit is
// 6 MB including the proxy envelope, so the gateway answers a clear error above 5 MiB.
const maxResponseBytes = 5 << 20

package tasks

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"github.com/agentpack/gateway/functions/mcp/gateway/builtin"
	"github.com/agentpack/gateway/functions/mcp/gateway/forward"
	"github.com/agentpack/gateway/functions/mcp/gateway/metrics"
	"github.com/agentpack/gateway/functions/mcp/gateway/request"
	"github.com/agentpack/gateway/functions/mcp/gateway/wire"
	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/httpapi"
	"github.com/agentpack/gateway/shared/logx"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Task defaults: how long a task is kept (the client may ask for less, never more), and
// the poll interval hint.
const (
	defaultTTL   = time.Hour
	maxTTL       = 24 * time.Hour
	pollInterval = time.Second
	pageSize     = 50
)

// Job is what a worker needs to run a gateway task: the row's id and owner, the
// connection, and the tools/call params to forward (upstream tool name set, "task"
// removed). It travels in the asynchronous invocation's event, so arguments are never
// stored.
type Job struct {
	TaskID       string `json:"taskId"`
	WorkspaceID  string `json:"workspaceId"`
	Principal    string `json:"principal"`
	RequestID    string `json:"requestId"`
	ConnectionID string `json:"connectionId"`
	// ChatID is the creating request's chat as the edge accepted it (request.State.ChatID),
	// "" when none: the task's audit row carries it.
	ChatID string          `json:"chatId,omitempty"`
	Tool   string          `json:"tool"`
	Params json.RawMessage `json:"params"`
}

// Options configure a Service. Pool, Forward and Builtins are required.
type Options struct {
	Pool     *db.Pool
	Forward  *forward.Forwarder
	Builtins *builtin.Set
	Metrics  *metrics.EMF
	Logger   *slog.Logger
	// CallTimeout bounds how long a 2025-11-25 tasks/result waits on a working task within
	// one request (the gateway's call timeout).
	CallTimeout time.Duration
	// Timeout bounds a task's run (the worker's budget).
	Timeout time.Duration
	// Start starts a task's worker out of the request; nil runs it on a goroutine of this
	// process (make run, tests). In Lambda: an asynchronous invocation of the same function
	// whose handler calls [Service.Run].
	Start func(ctx context.Context, job Job) error
	// ResultView, when set, is a proxied call's result (of connection connID) as st's
	// endpoint shows it — tasks/result and the result a tasks/get inlines — so that a task's
	// result reads as the synchronous call's would (the aggregate endpoint's MCP Apps view
	// URIs, issue 34). nil: as stored.
	ResultView func(st *request.State, connID string, res json.RawMessage) json.RawMessage
}

// view is res (a result of task row t) as st's endpoint shows it (Options.ResultView).
func (s *Service) view(st *request.State, t *db.Task, res json.RawMessage) json.RawMessage {
	if s.o.ResultView == nil || t.ConnectionID == nil || len(res) == 0 {
		return res
	}
	return s.o.ResultView(st, *t.ConnectionID, res)
}

// Service creates, serves and runs the tasks of one gateway. It is safe for concurrent use.
type Service struct {
	o   Options
	log *slog.Logger
	// cancels: task id → *context.CancelFunc of a task this process runs
	cancels sync.Map
}

// New returns a Service over o. A nil Logger discards.
func New(o Options) *Service {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Service{o: o, log: o.Logger}
}

// newID returns 128 random bits, base64url.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// errUnknownTask answers an unknown, expired or foreign task id (-32602, as both forms say).
var errUnknownTask = wire.Refusal(jsonrpc.CodeInvalidParams, "unknown task")

// lookupError maps a lookup failure: not found (or another owner's) → unknown task.
func (s *Service) lookupError(ctx context.Context, err error) error {
	if apperr.CodeOf(err) == apperr.NotFound {
		return errUnknownTask
	}
	return s.storeError(ctx, err)
}

// storeError answers a failure while reading or writing a task, or preparing its call: a
// classified error (the database UNAVAILABLE, the connection removed) is wire.Failure
// with its own code and retryable flag; anything else is wire.Internal. Both carry an
// errorId, logged under the same id.
func (s *Service) storeError(ctx context.Context, err error) error {
	if apperr.As(err) == nil {
		return wire.Internal(ctx, s.log, "tasks", err, nil)
	}
	id := httpapi.NewID()
	logx.Annotate(ctx, logx.FieldErrorID, id)
	s.log.ErrorContext(ctx, "task request failed", "error_id", id, "err", err)
	return wire.Failure(wire.ToolError(err, id), id)
}

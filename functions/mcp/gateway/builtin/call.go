package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/agentpack/gateway/functions/mcp/gateway/audit"
	"github.com/agentpack/gateway/functions/mcp/gateway/metrics"
	"github.com/agentpack/gateway/functions/mcp/gateway/request"
	"github.com/agentpack/gateway/functions/mcp/gateway/wire"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/httpapi"
	"github.com/agentpack/gateway/shared/logx"
	"github.com/agentpack/gateway/shared/services"
	"github.com/agentpack/gateway/shared/telemetry"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
)

// Options are what the built-ins act through. The Services (services.NewServices, built once
// per process) are required for any call that reaches one; the built-ins never build a
// service themselves. Services.Connections may be nil: the connection built-ins (list,
// install, uninstall, toggle, test) then answer UNAVAILABLE. Pool backs the few reads
// done in place (a chat's pins). Audit is required for any call of a write built-in (and
// agentpack_audit_list).
type Options struct {
	services.Services
	Pool    *db.Pool
	Logger  *slog.Logger
	Metrics *metrics.EMF
	Audit   *audit.Trail
}

// Set is the process's built-in tools, compiled once.
type Set struct {
	svc      Options
	all      []*Compiled
	byName   map[string]*Compiled
	toolsets []Toolset
}

// New compiles every built-in declaration; an invalid one is a programming error returned
// here.
func New(svc Options) (*Set, error) {
	if svc.Logger == nil {
		svc.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Set{svc: svc, byName: map[string]*Compiled{}}
	for _, b := range s.definitions() {
		cb, err := compile(b)
		if err != nil {
			return nil, err
		}
		s.all = append(s.all, cb)
		s.byName[cb.Name] = cb
	}
	s.toolsets = toolsetsOf(s.all)
	return s, nil
}

// All returns every built-in, in declaration order.
func (s *Set) All() []*Compiled { return s.all }

// Lookup returns the built-in called name, or nil.
func (s *Set) Lookup(name string) *Compiled { return s.byName[name] }

// KnownToolset reports whether name is a toolset of some built-in.
func (s *Set) KnownToolset(name string) bool {
	for _, ts := range s.toolsets {
		if ts.Name == name {
			return true
		}
	}
	return false
}

// Handler is b's go-sdk tool handler (it reads the request.State from the context).
func (s *Set) Handler(b *Compiled) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return s.Call(ctx, b, req.Params.Arguments)
	}
}

// Call runs built-in b with raw arguments in the order of docs/DESIGN.md §4: instrumentation wraps the
// call; inside it the access check (before any argument parsing), argument validation
// against the input schema, the default project, the handler; any error is classified
// here, the result sealed once (wire.Seal), and a successful write audited before the
// answer. The request.State must be in ctx. The error is non-nil only when the audit row
// could not be written (or the state is missing): the write happened and the caller must
// not be told it succeeded.
func (s *Set) Call(ctx context.Context, b *Compiled, raw json.RawMessage) (*mcp.CallToolResult, error) {
	st := request.From(ctx)
	if st == nil {
		return nil, errors.New("builtin: request state missing")
	}
	start := time.Now()
	ctx, cancel := st.WithDeadline(ctx)
	defer cancel()
	logx.Annotate(ctx, logx.FieldTool, b.Name)
	ctx, span := telemetry.Start(ctx, "tools/call "+b.Name, attribute.String("agentpack.tool", b.Name))
	defer span.End()
	data, err := s.run(ctx, st, b, raw)
	var fail *wire.EnvelopeError
	outcome := "ok"
	if err != nil {
		errorID := httpapi.NewID()
		fail = wire.ToolError(err, errorID)
		outcome = "tool_error"
		telemetry.Fail(span, "built-in failed", err)
		logx.Annotate(ctx, logx.FieldRPCCode, string(fail.Code))
		if fail.ErrorID != "" {
			logx.Annotate(ctx, logx.FieldErrorID, errorID)
			s.svc.Logger.ErrorContext(ctx, "built-in tool failed", "tool", b.Name, "error_id", errorID, "err", err)
		}
	}
	logx.Annotate(ctx, logx.FieldOutcome, outcome)
	res := b.sealed(data, fail)
	d := time.Since(start)
	s.svc.Metrics.ToolCall("builtin", b.Name, outcome, st.RequestID, d)
	if !res.IsError && !b.Annotations.ReadOnlyHint {
		if err := s.svc.Audit.Record(audit.Entry{RequestID: st.RequestID, Principal: st.Principal.Subject,
			WorkspaceID: st.Workspace, ChatID: st.ChatID, Tool: b.Name, Version: b.Version, Kind: "builtin", Duration: d, Arguments: raw}); err != nil {
			return nil, err
		}
	}
	return res, nil
}

func (s *Set) run(ctx context.Context, st *request.State, b *Compiled, raw json.RawMessage) (any, error) {
	if err := checkToolAccess(st.Principal, b, st.Workspace); err != nil {
		return nil, err
	}
	args, err := validateArgs(b, raw)
	if err != nil {
		return nil, err
	}
	call := &Call{Principal: st.Principal, Workspace: st.Workspace, RawArgs: raw, Req: st}
	if b.TakesProject {
		if call.ProjectID, err = s.defaultProject(ctx, st, args); err != nil {
			return nil, err
		}
	}
	return b.Handler.run(ctx, call, args)
}

// defaultProject fills projectId (docs/DESIGN.md §4): the argument, else the request's
// project, else the workspace's default project (workspaces.Service.Project); a project of
// another workspace is INVALID_REFERENCE. args are validated arguments.
func (s *Set) defaultProject(ctx context.Context, st *request.State, args json.RawMessage) (string, error) {
	var p struct {
		ProjectID string `json:"projectId"`
	}
	_ = json.Unmarshal(args, &p)
	pid, err := s.svc.Workspaces.Project(ctx, st.Workspace, p.ProjectID, st.ProjectID)
	if err != nil || pid == "" {
		return "", err
	}
	return pid, nil
}

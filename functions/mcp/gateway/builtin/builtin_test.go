package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/gateway/functions/mcp/gateway/wire"
	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/mcpclient"
	"github.com/agentpack/gateway/shared/urlguard"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func testSet(t *testing.T) *Set {
	t.Helper()
	s, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestErrorClasses: one input that produces each envelope code (docs/DESIGN.md §5).
func TestErrorClasses(t *testing.T) {
	t.Parallel()
	s := testSet(t)
	member := &auth.Principal{Subject: "m", Role: auth.RoleMember, Workspaces: []string{"ws"}}
	_, validation := validateArgs(s.byName["agentpack_catalog_list"], json.RawMessage(`{"limit":"ten"}`))
	v, _ := auth.NewVerifier(context.Background(), auth.Options{Secret: "x"})
	_, unauth := v.Verify(context.Background(), "not.a.jwt")
	up := mcpclient.New(&mcpclient.Options{Guard: urlguard.New(&urlguard.Options{AllowPrivate: true}), ConnectTimeout: 2 * time.Second})
	t.Cleanup(func() { _ = up.Close() })
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	deadAddr := ln.Addr().String()
	_ = ln.Close()
	_, unreachable := up.CallTool(context.Background(), mcpclient.Target{URL: "http://" + deadAddr + "/mcp", Transport: "streamable-http"}, &mcp.CallToolParams{Name: "x"})
	_, dialErr := net.Dial("tcp", deadAddr)

	tests := []struct {
		name      string
		err       error
		code      apperr.Code
		retryable bool
		errorID   bool
	}{
		{"schema violation", validation, apperr.Validation, false, false},
		{"bad token", unauth, apperr.Unauthenticated, false, false},
		{"member calls admin-only", checkToolAccess(member, s.byName["agentpack_audit_list"], "ws"), apperr.Forbidden, false, false},
		{"other workspace", checkToolAccess(member, s.byName["agentpack_catalog_list"], "other"), apperr.Forbidden, false, false},
		{"no rows", fmt.Errorf("catalog get: %w", pgx.ErrNoRows), apperr.NotFound, false, false},
		{"unique violation", &pgconn.PgError{Code: "23505", Message: "duplicate key value violates unique constraint \"x\""}, apperr.Conflict, false, false},
		{"foreign-key violation", &pgconn.PgError{Code: "23503"}, apperr.InvalidReference, false, false},
		{"database shutting down", &pgconn.PgError{Code: "57P01"}, apperr.Unavailable, true, true},
		{"database unreachable", dialErr, apperr.Unavailable, true, true},
		{"upstream unreachable", unreachable, apperr.UpstreamUnavailable, true, true},
		{"deadline", fmt.Errorf("call: %w", context.DeadlineExceeded), apperr.UpstreamTimeout, true, true},
		{"upstream JSON-RPC error", &jsonrpc.Error{Code: -32000, Message: "upstream internals"}, apperr.UpstreamError, false, true},
		{"rate limited", apperr.New(apperr.RateLimited, "slow down"), apperr.RateLimited, true, false},
		{"unclassified", errors.New("dial postgres://app:hunter2@db:5432 failed"), apperr.Internal, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.err == nil {
				t.Fatal("the input produced no error")
			}
			e := wire.ToolError(tt.err, "err-123")
			if e.Code != tt.code || e.Retryable != tt.retryable || (e.ErrorID != "") != tt.errorID {
				t.Errorf("toolError(%v) = %+v, want code %s retryable %v errorId %v", tt.err, e, tt.code, tt.retryable, tt.errorID)
			}
			for _, secret := range []string{"hunter2", "postgres://", "upstream internals", "duplicate key"} {
				if strings.Contains(e.Message+e.Hint, secret) {
					t.Errorf("message leaks internals: %q", e.Message)
				}
			}
		})
	}
}

// TestBuiltinDefinitions: every built-in is compiled once at New, belongs to a toolset,
// has a valid name, and seal is the one place meta is written.
func TestBuiltinDefinitions(t *testing.T) {
	t.Parallel()
	s := testSet(t)
	seen := map[string]bool{}
	for _, b := range s.all {
		if !validName(b.Name) || seen[b.Name] || b.Toolset == "" || b.Version == "" || b.Description == "" || b.tool == nil || b.schema == nil {
			t.Errorf("built-in %+v", b.Builtin)
		}
		seen[b.Name] = true
		// Every built-in's outputSchema describes its data (issue 25: the MCP Inspector's
		// --strict warned once per built-in about "data": {}).
		if b.tool.OutputSchema == nil {
			// Only the call-by-name tool, whose answer is the named tool's own result.
			if b.Name != CallToolName {
				t.Errorf("%s: no output schema (only %s may leave it out)", b.Name, CallToolName)
			}
			continue
		}
		if b.Name == CallToolName {
			t.Errorf("%s lists an output schema; its answer is the named tool's own result", b.Name)
		}
		var out struct {
			Properties struct {
				Data struct {
					Type       string         `json:"type"`
					Properties map[string]any `json:"properties"`
					Required   []string       `json:"required"`
				} `json:"data"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(b.tool.OutputSchema.(json.RawMessage), &out); err != nil {
			t.Errorf("%s: output schema: %v", b.Name, err)
		}
		if d := out.Properties.Data; d.Type != "object" || len(d.Properties) == 0 || len(d.Required) == 0 {
			t.Errorf("%s: output schema data %+v, want an object with its properties and required ones", b.Name, d)
		}
		for _, r := range out.Properties.Data.Required {
			if _, ok := out.Properties.Data.Properties[r]; !ok {
				t.Errorf("%s: output data requires %q but does not describe it", b.Name, r)
			}
		}
		if toolsetDescriptions[b.Toolset] == "" {
			t.Errorf("%s: toolset %q has no description", b.Name, b.Toolset)
		}
	}
	res := wire.Seal(wire.EnvelopeMeta{Tool: "t", Version: "1.2.3"}, nil, &wire.EnvelopeError{Code: apperr.NotFound, Message: "m"})
	var env wire.Envelope
	_ = json.Unmarshal(res.StructuredContent.(json.RawMessage), &env)
	if !res.IsError || env.OK || env.Meta.Tool != "t" || env.Meta.Version != "1.2.3" {
		t.Errorf("seal = %+v", env)
	}
}

func validName(n string) bool {
	if len(n) == 0 || len(n) > 64 {
		return false
	}
	for _, r := range n {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

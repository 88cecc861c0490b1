package gateway

import (
	"context"

	"github.com/agentpack/gateway/functions/mcp/gateway/audit"
)

// FlushAudit waits until every audit row this gateway queued is committed, or ctx ends
// (its error; the rows stay queued). docs/DESIGN.md "The audit row after the answer".
func (g *Gateway) FlushAudit(ctx context.Context) error { return g.audit.Flush(ctx) }

// DrainAudit is what runs after each Lambda invocation (lambdaapp.RegisterDrain): FlushAudit
// that gives up, UNAVAILABLE, as soon as a write fails, so that an execution environment is
// not held while the database is down.
func (g *Gateway) DrainAudit(ctx context.Context) error { return g.audit.Drain(ctx) }

// CloseAudit flushes the audit rows until ctx ends and counts and logs by key those it could
// not write (a shutdown hook: SIGTERM under Lambda, local shutdown).
func (g *Gateway) CloseAudit(ctx context.Context) { g.audit.Close(ctx) }

// AuditStats are the audit trail's counters (recorded, written, retried, lost, queued).
func (g *Gateway) AuditStats() audit.Stats { return g.audit.Stats() }

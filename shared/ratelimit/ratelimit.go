// Package ratelimit holds the rate limits and quotas of workspaces (docs/RATE-LIMITS.md):
// the admin's writes and reads with their usage (Service, used by the marketplace REST
// function and the gateway's built-ins) and the check on the proxied call path (Limiter,
// used by functions/mcp/gateway/forward before anything goes upstream).
//
// A limit caps proxied tools/call traffic of a workspace — all of it, one connection's, or
// one exposed tool's — shared by the whole workspace, per member ("*") or for one member,
// in calls per UTC minute and/or per UTC day (fixed windows). The counters are rows in
// Postgres incremented by one atomic upsert per call (db.RateLimitTake), so every gateway
// instance enforces the same counts: no window ever admits more calls than its limit.
package ratelimit

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"regexp"
	"strings"
	"time"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/derrors"
)

// MaxPerMinute and MaxPerDay bound a limit's values (a larger value is no limit at all).
const (
	MaxPerMinute = 1_000_000
	MaxPerDay    = 100_000_000
)

// Input is what an admin sets (POST /api/rate-limits, agentpack_ratelimit_set): the scope
// (WorkspaceID required; ConnectionID or Tool, at most one; Principal "" for the whole
// workspace, "*" for each member, or one member's token subject) and the values, at least
// one of PerMinute and PerDay.
type Input struct {
	WorkspaceID  string `json:"workspaceId" format:"uuid"`
	ConnectionID string `json:"connectionId,omitempty" format:"uuid" doc:"Limit the calls to this connection's tools (not with tool)."`
	Tool         string `json:"tool,omitempty" pattern:"^[A-Za-z0-9_-]{1,64}$" doc:"Limit the calls of this exposed tool name (not with connectionId)."`
	Principal    string `json:"principal,omitempty" maxLength:"256" doc:"\"\" (default): one bucket for the whole workspace; \"*\": a bucket per member; else that member's token subject only."`
	PerMinute    *int   `json:"perMinute,omitempty" minimum:"1" maximum:"1000000"`
	PerDay       *int   `json:"perDay,omitempty" minimum:"1" maximum:"100000000"`
}

var toolName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// validate checks in's fields (VALIDATION_ERROR naming the field) after the caller's
// access was checked.
func (in *Input) validate() error {
	field := func(f, format string, args ...any) *apperr.Error {
		return apperr.New(apperr.Validation, format, args...).WithDetails(map[string]string{"field": f})
	}
	if in.ConnectionID != "" && !db.IsUUID(in.ConnectionID) {
		return field("connectionId", "connectionId must be a UUID")
	}
	if in.Tool != "" && !toolName.MatchString(in.Tool) {
		return field("tool", "tool must be an exposed tool name (1 to 64 of A-Z a-z 0-9 _ -)")
	}
	if in.ConnectionID != "" && in.Tool != "" {
		return field("tool", "give connectionId or tool, not both").
			WithHint("a tool's exposed name already names its connection")
	}
	if len(in.Principal) > 256 || strings.TrimSpace(in.Principal) != in.Principal {
		return field("principal", "principal must be a token subject of at most 256 characters, \"*\" or empty")
	}
	if in.PerMinute == nil && in.PerDay == nil {
		return field("perMinute", "perMinute or perDay is required")
	}
	if in.PerMinute != nil && (*in.PerMinute < 1 || *in.PerMinute > MaxPerMinute) {
		return field("perMinute", "perMinute must be from 1 to %d", MaxPerMinute)
	}
	if in.PerDay != nil && (*in.PerDay < 1 || *in.PerDay > MaxPerDay) {
		return field("perDay", "perDay must be from 1 to %d", MaxPerDay)
	}
	return nil
}

// Service is the admin side: set, list (with usage) and delete a workspace's limits.
// Every method checks the caller first: a member is FORBIDDEN, a workspace the caller is
// not in is NOT_FOUND (docs/DESIGN.md §8). Each write is an event_log entry.
type Service struct {
	Pool   *db.Pool
	Logger *slog.Logger
	// Publish, when set, republishes workspace ws's catalog document after a committed
	// change, so that the limits travelling with it are current (connections.Service
	// PublishWorkspace): the gateway then counts a call only when a limit applies, and a
	// new limit applies within CATALOG_TTL. A failed publish is logged; the health check's
	// reconcile rebuilds the documents later.
	Publish func(ctx context.Context, ws string) error
}

// publish runs s.Publish for ws, logging a failure.
func (s *Service) publish(ctx context.Context, ws string) {
	if s.Publish == nil {
		return
	}
	if err := s.Publish(context.WithoutCancel(ctx), ws); err != nil && s.Logger != nil {
		s.Logger.ErrorContext(ctx, "catalog publish failed after a rate limit change; the limit applies after the next rebuild",
			"workspace_id", ws, "err", err)
	}
}

// access checks that p is an admin of ws.
func access(p *auth.Principal, ws string) error {
	if err := auth.RequireAdmin(p); err != nil {
		return err
	}
	if ws == "" {
		return apperr.New(apperr.Validation, "workspaceId is required").WithDetails(map[string]string{"field": "workspaceId"})
	}
	if !db.IsUUID(ws) || !p.InWorkspace(ws) {
		return apperr.New(apperr.NotFound, "workspace not found")
	}
	return nil
}

// Set creates or replaces the limit of in's scope and returns it with its usage; created
// reports whether the scope had none. A connection that is not the workspace's (or global)
// is NOT_FOUND.
func (s *Service) Set(ctx context.Context, p *auth.Principal, in Input) (_ *View, created bool, err error) {
	defer derrors.Wrap(&err, "ratelimit: set in %s", in.WorkspaceID)
	if err := access(p, in.WorkspaceID); err != nil {
		return nil, false, err
	}
	if err := in.validate(); err != nil {
		return nil, false, err
	}
	var row *db.RateLimit
	err = db.InTx(ctx, s.Pool, func(tx db.Tx) error {
		if in.ConnectionID != "" {
			c, err := db.ConnectionGet(ctx, tx, in.ConnectionID)
			if apperr.CodeOf(err) == apperr.NotFound || (err == nil && c.WorkspaceID != nil && *c.WorkspaceID != in.WorkspaceID) {
				return apperr.New(apperr.NotFound, "connection not found").WithDetails(map[string]string{"field": "connectionId"})
			}
			if err != nil {
				return err
			}
		}
		l := &db.RateLimit{WorkspaceID: in.WorkspaceID, PerMinute: in.PerMinute, PerDay: in.PerDay, CreatedBy: p.Subject,
			ConnectionID: opt(in.ConnectionID), Tool: opt(in.Tool), Principal: opt(in.Principal)}
		var err error
		if row, err = db.RateLimitUpsert(ctx, tx, l); err != nil {
			return err
		}
		return db.EventInsert(ctx, tx, &db.Event{EntityType: "rate_limit", EntityID: row.ID, Action: "rate_limit.set",
			Actor: p.Subject, WorkspaceID: &in.WorkspaceID, Payload: eventPayload(row)})
	})
	if err != nil {
		return nil, false, err
	}
	s.publish(ctx, in.WorkspaceID)
	v := NewView(row, nil)
	return &v, row.Inserted, nil
}

// List returns workspace ws's limits, each with its current usage.
func (s *Service) List(ctx context.Context, p *auth.Principal, ws string) (_ []View, err error) {
	defer derrors.Wrap(&err, "ratelimit: list %s", ws)
	if err := access(p, ws); err != nil {
		return nil, err
	}
	rows, err := db.RateLimitList(ctx, s.Pool, ws)
	if err != nil {
		return nil, err
	}
	usage, err := db.RateLimitUsage(ctx, s.Pool, ws)
	if err != nil {
		return nil, err
	}
	by := map[string][]db.RateUsage{}
	for _, u := range usage {
		by[u.LimitID] = append(by[u.LimitID], u)
	}
	out := make([]View, 0, len(rows))
	for i := range rows {
		out = append(out, NewView(&rows[i], by[rows[i].ID]))
	}
	return out, nil
}

// Delete removes limit id of workspace ws; NOT_FOUND when ws has none of that id.
func (s *Service) Delete(ctx context.Context, p *auth.Principal, ws, id string) (err error) {
	defer derrors.Wrap(&err, "ratelimit: delete %s in %s", id, ws)
	if err := access(p, ws); err != nil {
		return err
	}
	err = db.InTx(ctx, s.Pool, func(tx db.Tx) error {
		row, err := db.RateLimitDelete(ctx, tx, ws, id)
		if apperr.CodeOf(err) == apperr.NotFound {
			return apperr.New(apperr.NotFound, "rate limit not found")
		}
		if err != nil {
			return err
		}
		return db.EventInsert(ctx, tx, &db.Event{EntityType: "rate_limit", EntityID: row.ID, Action: "rate_limit.deleted",
			Actor: p.Subject, WorkspaceID: &ws, Payload: eventPayload(row)})
	})
	if err == nil {
		s.publish(ctx, ws)
	}
	return err
}

func eventPayload(l *db.RateLimit) map[string]any {
	v := NewView(l, nil)
	return map[string]any{"connectionId": v.ConnectionID, "tool": v.Tool, "principal": v.Principal,
		"perMinute": v.PerMinute, "perDay": v.PerDay}
}

func opt(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// Limiter is the check on the proxied call path. Safe for concurrent use.
type Limiter struct {
	Pool *db.Pool
}

// Call is what one proxied call is counted as: its workspace, connection, exposed tool
// name and the caller's token subject.
type Call struct {
	Workspace  string
	Connection string
	Tool       string
	Principal  string
}

// Decision is the outcome of Take: Allowed, or refused by Window (the fullest window that
// refused it) with RetryAfter, the time until that window ends (rounded up to whole
// seconds, at least 1 s). Windows is how many windows the call was checked against (0:
// no limit applies).
type Decision struct {
	Allowed    bool
	Windows    int
	Window     *db.RateWindow
	RetryAfter time.Duration
}

// Take counts call against every limit that applies (db.RateLimitTake). When a window is
// full the call is refused and what it took from the other windows is given back, so a
// refused call costs no allowance. Errors are the database's (UNAVAILABLE when it cannot
// be reached): the caller refuses the call then, since it could not be counted.
func (l *Limiter) Take(ctx context.Context, c Call) (Decision, error) {
	if l == nil || l.Pool == nil || c.Workspace == "" {
		return Decision{Allowed: true}, nil
	}
	ws, err := db.RateLimitTake(ctx, l.Pool, c.Workspace, c.Connection, c.Tool, c.Principal)
	if err != nil {
		return Decision{}, err
	}
	d := Decision{Allowed: true, Windows: len(ws)}
	var taken []db.RateWindow
	for i := range ws {
		w := &ws[i]
		if w.Taken {
			taken = append(taken, *w)
			continue
		}
		d.Allowed = false
		if wait := retryAfter(w); d.Window == nil || wait > d.RetryAfter {
			d.Window, d.RetryAfter = w, wait
		}
	}
	if !d.Allowed && len(taken) > 0 {
		// Detached from the call's cancellation: the give-back must land.
		gctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		if err := db.RateLimitGiveBack(gctx, l.Pool, taken); err != nil {
			return d, err
		}
	}
	return d, nil
}

// WindowLength is the length of window kind ("minute" or "day").
func WindowLength(kind string) time.Duration {
	if kind == "day" {
		return 24 * time.Hour
	}
	return time.Minute
}

// retryAfter is the time from the database's now until w ends, in whole seconds, ≥ 1 s.
func retryAfter(w *db.RateWindow) time.Duration {
	left := w.WindowStart.Add(WindowLength(w.Kind)).Sub(w.Now)
	secs := math.Ceil(left.Seconds())
	if secs < 1 {
		secs = 1
	}
	return time.Duration(secs) * time.Second
}

// Refusal is the RATE_LIMITED error of a refused decision (docs/RATE-LIMITS.md): retryable,
// the hint says when, and the details carry retryAfterSeconds, the window and its limit.
func Refusal(d Decision) *apperr.Error {
	secs := int(d.RetryAfter / time.Second)
	w := d.Window
	return apperr.New(apperr.RateLimited, "rate limit reached: %d calls per %s", w.Max, w.Kind).
		WithHint(fmt.Sprintf("retry after %d seconds, when the %s window ends", secs, w.Kind)).
		WithDetails(RefusalDetails{RetryAfterSeconds: secs, Window: w.Kind, Limit: w.Max, LimitID: w.LimitID})
}

// RefusalDetails are the details of a RATE_LIMITED error.
type RefusalDetails struct {
	RetryAfterSeconds int    `json:"retryAfterSeconds"`
	Window            string `json:"window"`
	Limit             int    `json:"limit"`
	LimitID           string `json:"limitId"`
}

// RetryAfter is RetryAfterSeconds (httpapi.RetryAfterer: REST sets Retry-After from it).
func (d RefusalDetails) RetryAfter() int { return d.RetryAfterSeconds }

package ratelimit

import (
	"time"

	"github.com/agentpack/gateway/shared/db"
)

// View is a limit as REST and the built-ins show it (openapi.json
// #/components/schemas/RateLimit): its scope, values, and usage — the current window's
// count per window and subject (one row per member who called, for a per-member limit;
// subject "" for a shared bucket), with the limit and when the window ends (RFC 3339).
type View struct {
	ID           string    `json:"id" format:"uuid"`
	WorkspaceID  string    `json:"workspaceId" format:"uuid"`
	ConnectionID *string   `json:"connectionId"`
	Tool         *string   `json:"tool"`
	Principal    string    `json:"principal"`
	PerMinute    *int      `json:"perMinute"`
	PerDay       *int      `json:"perDay"`
	CreatedBy    string    `json:"createdBy"`
	CreatedAt    time.Time `json:"createdAt"`
	UpdatedAt    time.Time `json:"updatedAt"`
	Usage        []Usage   `json:"usage"`
}

// Usage is the count of one window of a limit for one subject.
type Usage struct {
	Window   string    `json:"window"`
	Subject  string    `json:"subject"`
	Used     int       `json:"used"`
	Limit    int       `json:"limit"`
	ResetsAt time.Time `json:"resetsAt"`
}

// NewView is the view of row l with the usage rows u of its current windows (nil: none
// counted yet); a window the limit no longer has is left out.
func NewView(l *db.RateLimit, u []db.RateUsage) View {
	p := ""
	if l.Principal != nil {
		p = *l.Principal
	}
	v := View{ID: l.ID, WorkspaceID: l.WorkspaceID, ConnectionID: l.ConnectionID, Tool: l.Tool, Principal: p,
		PerMinute: l.PerMinute, PerDay: l.PerDay, CreatedBy: l.CreatedBy, CreatedAt: l.CreatedAt, UpdatedAt: l.UpdatedAt,
		Usage: []Usage{}}
	for _, r := range u {
		max := 0
		switch {
		case r.Kind == "minute" && l.PerMinute != nil:
			max = *l.PerMinute
		case r.Kind == "day" && l.PerDay != nil:
			max = *l.PerDay
		default:
			continue // a window the limit no longer has
		}
		v.Usage = append(v.Usage, Usage{Window: r.Kind, Subject: r.Subject, Used: min(r.Count, max), Limit: max,
			ResetsAt: r.WindowStart.Add(WindowLength(r.Kind)).UTC()})
	}
	return v
}

package api

import (
	"encoding/csv"
	"net/http"
	"strconv"
	"time"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/httpapi"
	"github.com/agentpack/gateway/shared/logx"
)

// usageWindows are the windows GET /api/usage answers for.
var usageWindows = map[string]time.Duration{"24h": 24 * time.Hour, "7d": 7 * 24 * time.Hour}

// usageGet is GET /api/usage?workspaceId=&by=tool|connection|principal|chat&window=24h|7d
// [&format=csv] (admin): the workspace's calls, errors and p50/p95 latency per group over
// the window, read from the usage rollup (db.UsageByKey over usage_rollup, which the audit
// writer's batch updates in the statement that writes the rows: docs/POLICIES.md "Usage"),
// so the figures are as fresh as the audit log; the window is whole 5-minute buckets, and
// p50/p95 are within one latency bucket's width of the exact figures. format=csv answers
// text/csv with a header line (by=principal adds a last column, label: the person's email
// or name, as the JSON rows' label).
func (a *API) usageGet(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if err := requireAdmin(p); err != nil {
		return err
	}
	q := r.URL.Query()
	ws := connections.DefaultWorkspace(p, q.Get("workspaceId"))
	if ws == "" {
		return apperr.New(apperr.Validation, "query parameter workspaceId is required").WithDetails(map[string]string{"field": "workspaceId"})
	}
	if !db.IsUUID(ws) || !p.InWorkspace(ws) {
		return apperr.New(apperr.NotFound, "workspace not found")
	}
	by, window := q.Get("by"), q.Get("window")
	if by == "" {
		by = "tool"
	}
	if window == "" {
		window = "24h"
	}
	d, ok := usageWindows[window]
	if !ok {
		return apperr.New(apperr.Validation, "window must be 24h or 7d").WithDetails(map[string]string{"field": "window"})
	}
	format := q.Get("format")
	if format != "" && format != "json" && format != "csv" {
		return apperr.New(apperr.Validation, "format must be json or csv").WithDetails(map[string]string{"field": "format"})
	}
	now := time.Now().UTC()
	rows, err := db.UsageByKey(r.Context(), a.Pool, ws, by, now.Add(-d))
	if err != nil {
		return err
	}
	logx.Annotate(r.Context(), logx.FieldWorkspace, ws)
	if rows == nil {
		rows = []db.UsageRow{}
	}
	if format == "csv" {
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
		w.Header().Set("Content-Disposition", `attachment; filename="usage-`+by+`-`+window+`.csv"`)
		cw := csv.NewWriter(w)
		head := []string{by, "calls", "errors", "p50_ms", "p95_ms"}
		if by == "principal" {
			head = append(head, "label") // the person's email or name (UsageRow.Label)
		}
		_ = cw.Write(head)
		f := func(v *float64) string {
			if v == nil {
				return ""
			}
			return strconv.FormatFloat(*v, 'f', 3, 64)
		}
		for _, u := range rows {
			rec := []string{u.Key, strconv.FormatInt(u.Calls, 10), strconv.FormatInt(u.Errors, 10), f(u.P50MS), f(u.P95MS)}
			if by == "principal" {
				rec = append(rec, u.Label)
			}
			_ = cw.Write(rec)
		}
		cw.Flush()
		return nil
	}
	httpapi.JSON(w, http.StatusOK, usageAnswer{By: by, Window: window, Since: now.Add(-d), AsOf: now, Rows: rows})
	return nil
}

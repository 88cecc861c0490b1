package api

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/httpapi"
	"github.com/agentpack/gateway/shared/pins"
	"github.com/agentpack/gateway/shared/text"
)

// eventList is GET /api/events?workspaceId=&entityType=&action=&before=&limit=: the
// workspace's event_log (who did what, when), newest first, for admins of the workspace
// (the rows name connections and their URLs, which members do not see either).
// workspaceId may be left out when the token names exactly one workspace. Payloads were
// redacted when written. The answer is {"events": [...], "hasMore", "nextBefore"?}: pass
// nextBefore as before to read the next page.
//
// Errors: 400 (workspaceId missing and ambiguous, an entityType not in
// db.EventEntityTypes, bad before/limit), 403 (not admin),
// 404 (not the caller's workspace).
func (a *API) eventList(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	q := r.URL.Query()
	ws, err := pins.Workspace(p, q.Get("workspaceId"))
	if err != nil {
		return err
	}
	if err := auth.RequireAdmin(p); err != nil {
		return err
	}
	f := db.EventFilter{WorkspaceID: ws, EntityType: q.Get("entityType"), Action: q.Get("action")}
	if v := q.Get("before"); v != "" {
		if f.BeforeID, err = strconv.ParseInt(v, 10, 64); err != nil || f.BeforeID < 1 {
			return apperr.New(apperr.Validation, "before must be a positive event id")
		}
	}
	if v := q.Get("limit"); v != "" {
		if f.Limit, err = strconv.Atoi(v); err != nil || f.Limit < 1 || f.Limit > 200 {
			return apperr.New(apperr.Validation, "limit must be an integer from 1 to 200")
		}
	}
	if f.EntityType != "" && !slices.Contains(db.EventEntityTypes, f.EntityType) {
		return apperr.New(apperr.Validation, "entityType %q is not one of %s", text.Clip(f.EntityType, 100), strings.Join(db.EventEntityTypes, ", "))
	}
	for _, s := range []string{f.EntityType, f.Action} {
		if len(s) > 100 {
			return apperr.New(apperr.Validation, "entityType and action are at most 100 characters")
		}
	}
	events, more, err := db.EventList(r.Context(), a.Pool, f)
	if err != nil {
		return err
	}
	if events == nil {
		events = []db.Event{}
	}
	out := eventPage{Events: events, HasMore: more}
	if more {
		out.NextBefore = events[len(events)-1].ID
	}
	httpapi.JSON(w, http.StatusOK, out)
	return nil
}

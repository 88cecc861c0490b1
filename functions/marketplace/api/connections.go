package api

import (
	"net/http"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/httpapi"
	"github.com/agentpack/gateway/shared/logx"
)

func (a *API) install(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	var in connections.InstallInput
	if err := httpapi.Decode(w, r, &in); err != nil {
		return err
	}
	if err := notOwnRESTURL(r, in.URL); err != nil {
		return err
	}
	out, err := a.Connections.Install(r.Context(), p, r.PathValue("id"), in)
	if err != nil {
		return err
	}
	httpapi.JSON(w, http.StatusCreated, outcomeView(out))
	return nil
}

// uninstall is DELETE /api/mcp-marketplace/{id}/install?workspaceId=... (a query
// parameter, not a body: DELETE bodies are dropped by some clients and proxies; it may be
// left out when the token names exactly one workspace).
func (a *API) uninstall(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	ws := connections.DefaultWorkspace(p, r.URL.Query().Get("workspaceId"))
	if ws == "" {
		return apperr.New(apperr.Validation, "query parameter workspaceId is required").
			WithHint("the token names no single workspace")
	}
	if err := a.Connections.Uninstall(r.Context(), p, r.PathValue("id"), ws); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (a *API) connectionList(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if err := requireAdmin(p); err != nil {
		return err
	}
	ws := r.URL.Query().Get("workspaceId")
	rows, err := a.Connections.List(r.Context(), p, ws)
	if err != nil {
		return err
	}
	logx.Annotate(r.Context(), logx.FieldWorkspace, ws) // checked by List
	// Only the detail (and a write's answer to the admin who sent the URL) shows the URL
	// whole: a query may hold the upstream's API key.
	out := make([]connections.View, 0, len(rows))
	for i := range rows {
		out = append(out, connections.NewView(&rows[i], false))
	}
	httpapi.JSON(w, http.StatusOK, connectionList{Connections: out})
	return nil
}

func (a *API) connectionStatuses(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	st, err := a.Connections.Statuses(r.Context(), p, r.URL.Query().Get("workspaceId"))
	if err != nil {
		return err
	}
	httpapi.JSON(w, http.StatusOK, statusList{Statuses: st})
	return nil
}

// myAuthorizations is GET /api/mcp-connections/authorizations[?workspaceId=]: the caller's
// upstream authorization state of every OAuth connection they may use (any role).
func (a *API) myAuthorizations(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	out, err := a.Connections.MyAuthorizations(r.Context(), p, r.URL.Query().Get("workspaceId"))
	if err != nil {
		return err
	}
	httpapi.JSON(w, http.StatusOK, authorizationList{Authorizations: out})
	return nil
}

func (a *API) connectionCreate(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if err := requireAdmin(p); err != nil {
		return err
	}
	var in connections.CreateInput
	if err := httpapi.Decode(w, r, &in); err != nil {
		return err
	}
	if err := notOwnRESTURL(r, in.URL); err != nil {
		return err
	}
	out, err := a.Connections.Create(r.Context(), p, in)
	if err != nil {
		return err
	}
	httpapi.JSON(w, http.StatusCreated, outcomeView(out))
	return nil
}

func (a *API) connectionGet(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if err := requireAdmin(p); err != nil {
		return err
	}
	c, err := a.Connections.Get(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	st, err := a.Connections.AuthorizationOf(r.Context(), c, p.Subject)
	if err != nil {
		return err
	}
	if err := a.Connections.NameAuthorizers(r.Context(), st); err != nil {
		return err
	}
	httpapi.JSON(w, http.StatusOK, connections.DetailView{View: connections.NewView(c, true), Authorization: st})
	return nil
}

func (a *API) connectionUpdate(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if err := requireAdmin(p); err != nil {
		return err
	}
	var in connections.UpdateInput
	if err := httpapi.Decode(w, r, &in); err != nil {
		return err
	}
	if in.URL != nil {
		if err := notOwnRESTURL(r, *in.URL); err != nil {
			return err
		}
	}
	out, err := a.Connections.Update(r.Context(), p, r.PathValue("id"), in)
	if err != nil {
		return err
	}
	httpapi.JSON(w, http.StatusOK, outcomeView(out))
	return nil
}

func (a *API) connectionDelete(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if err := a.Connections.Delete(r.Context(), p, r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (a *API) connectionToggle(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	out, err := a.Connections.Toggle(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	httpapi.JSON(w, http.StatusOK, outcomeView(out))
	return nil
}

func (a *API) connectionTest(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	res, err := a.Connections.Test(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	httpapi.JSON(w, http.StatusOK, res)
	return nil
}

func (a *API) connectionRefresh(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	res, err := a.Connections.RefreshByID(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	httpapi.JSON(w, http.StatusOK, res)
	return nil
}

func (a *API) connectionTools(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	tools, err := a.Connections.Tools(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	if tools == nil {
		tools = []db.ConnectionTool{}
	}
	notes, err := a.Connections.SchemaNotes(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	httpapi.JSON(w, http.StatusOK, toolList{Tools: tools, SchemaNotes: notes})
	return nil
}

// connectionSkills is GET /api/mcp-connections/{id}/skills: the skills (SEP-2640) the
// connection's upstream served at its last refresh (docs/SKILLS.md), for the Marketplace.
func (a *API) connectionSkills(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	skills, err := a.Connections.Skills(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	httpapi.JSON(w, http.StatusOK, skillList{Skills: skills})
	return nil
}

func (a *API) toolApprove(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	t, err := a.Connections.ApproveTool(r.Context(), p, r.PathValue("id"), r.PathValue("name"))
	if err != nil {
		return err
	}
	httpapi.JSON(w, http.StatusOK, t)
	return nil
}

// outcomeView is a write's outcome as REST answers it: the URL whole, to the admin who
// may have sent it (connections.NewOutcomeView).
func outcomeView(out *connections.Outcome) connections.OutcomeView {
	return connections.NewOutcomeView(out, true)
}

package api

import (
	"net/http"

	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/httpapi"
	"github.com/agentpack/gateway/shared/logx"
)

// workspaceInput is the body of POST /api/workspaces.
type workspaceInput struct {
	Name string `json:"name" minLength:"1" maxLength:"200"`
}

// workspaceCreate is POST /api/workspaces {name} (superuser): 201 with the workspace
// (identity.Service.WorkspaceCreate; the caller becomes its admin when it is a person).
func (a *API) workspaceCreate(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	var in workspaceInput
	if err := httpapi.Decode(w, r, &in); err != nil {
		return err
	}
	ws, err := a.People.WorkspaceCreate(r.Context(), p, in.Name)
	if err != nil {
		return err
	}
	logx.Annotate(r.Context(), logx.FieldWorkspace, ws.ID)
	httpapi.JSON(w, http.StatusCreated, ws)
	return nil
}

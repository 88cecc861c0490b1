package api

import (
	"net/http"

	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/httpapi"
	"github.com/agentpack/gateway/shared/logx"
	"github.com/agentpack/gateway/shared/policy"
)

// policyInput is the body of PUT /api/policies and POST /api/policies/validate.
type policyInput struct {
	WorkspaceID string `json:"workspaceId,omitempty" format:"uuid" doc:"May be left out when the token names exactly one workspace (ignored by the global document)."`
	Text        string `json:"text" maxLength:"65536" doc:"Cedar policies; a policy's id is its @id(\"…\") annotation, else policy<N>."`
}

// policyGet is GET /api/policies?workspaceId= (admin): the workspace's Cedar document as
// saved, with its policy ids; with global, GET /api/policies/global (admin): the global
// document, which every workspace's calls are decided by first.
func (a *API) policyGet(global bool) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
		ws := ""
		if !global {
			ws = connections.DefaultWorkspace(p, r.URL.Query().Get("workspaceId"))
		}
		v, err := a.Policies.Get(r.Context(), p, ws, global)
		if err != nil {
			return err
		}
		if !global {
			logx.Annotate(r.Context(), logx.FieldWorkspace, ws)
		}
		httpapi.JSON(w, http.StatusOK, v)
		return nil
	}
}

// policyPut is PUT /api/policies (admin): validates and saves the workspace's document.
// 400 with details.problems (line, column) when it does not parse or validate, 409 when it
// would lock every admin out of the policy API; nothing is stored then. With global, PUT
// /api/policies/global {"text"} (superuser): validates (types and attributes; names are
// per workspace) and saves the global document, then republishes every workspace's
// catalog (a workspaceId in the body is ignored).
func (a *API) policyPut(global bool) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
		if err := requireAdmin(p); err != nil {
			return err
		}
		var in policyInput
		if err := httpapi.Decode(w, r, &in); err != nil {
			return err
		}
		ws := ""
		if !global {
			ws = connections.DefaultWorkspace(p, in.WorkspaceID)
		}
		v, err := a.Policies.Put(r.Context(), p, ws, global, in.Text)
		if err != nil {
			return err
		}
		httpapi.JSON(w, http.StatusOK, v)
		return nil
	}
}

// policyValidate is POST /api/policies/validate (admin): the same checks as a save,
// nothing stored: 200 {"valid": true, "policyIds", "warnings"} or the save's 400. warnings
// (policy.Service.Warnings) name a role the document leaves with no tool at all; the
// console shows them and asks before saving, and the save's answer carries them too.
func (a *API) policyValidate(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if err := requireAdmin(p); err != nil {
		return err
	}
	var in policyInput
	if err := httpapi.Decode(w, r, &in); err != nil {
		return err
	}
	ws := connections.DefaultWorkspace(p, in.WorkspaceID)
	set, err := a.Policies.Check(r.Context(), p, ws, false, in.Text)
	if err != nil {
		return err
	}
	warnings, err := a.Policies.Warnings(r.Context(), ws, false, set)
	if err != nil {
		return err
	}
	httpapi.JSON(w, http.StatusOK, policyValidity{Valid: true, PolicyIDs: set.IDs(), Warnings: warnings})
	return nil
}

// policyWhatIf is POST /api/policies/what-if (admin): the decision for a hypothetical
// principal, action, tool and arguments, under the saved document or the one given.
func (a *API) policyWhatIf(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if err := requireAdmin(p); err != nil {
		return err
	}
	var in policy.WhatIf
	if err := httpapi.Decode(w, r, &in); err != nil {
		return err
	}
	in.WorkspaceID = connections.DefaultWorkspace(p, in.WorkspaceID)
	d, err := a.Policies.Decide(r.Context(), p, in)
	if err != nil {
		return err
	}
	httpapi.JSON(w, http.StatusOK, d)
	return nil
}

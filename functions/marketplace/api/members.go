package api

import (
	"net/http"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/httpapi"
	"github.com/agentpack/gateway/shared/logx"
)

// Workspace members (docs/AUTH.md "Signing in: the organisation's identity provider"):
// the admins of a workspace list, add (or invite by email), change and remove its members.
// The rules (admin of that workspace, the last admin stays) are identity.Service's.

// memberList is GET /api/workspaces/{ws}/members (admin of ws): {"members": [Member]}.
func (a *API) memberList(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	ws := r.PathValue("ws")
	out, err := a.People.MemberList(r.Context(), p, ws)
	if err != nil {
		return err
	}
	logx.Annotate(r.Context(), logx.FieldWorkspace, ws)
	httpapi.JSON(w, http.StatusOK, memberList{Members: out})
	return nil
}

// memberInput is the body of POST /api/workspaces/{ws}/members.
type memberInput struct {
	Email string `json:"email" maxLength:"320"`
	Role  string `json:"role" enum:"member,admin"`
}

// memberAdd is POST /api/workspaces/{ws}/members {email, role} (admin of ws): 201 with the
// Member, "active" for a person who has signed in, "invited" otherwise.
func (a *API) memberAdd(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	var in memberInput
	if err := httpapi.Decode(w, r, &in); err != nil {
		return err
	}
	m, err := a.People.MemberAdd(r.Context(), p, r.PathValue("ws"), in.Email, in.Role)
	if err != nil {
		return err
	}
	httpapi.JSON(w, http.StatusCreated, m)
	return nil
}

// memberRoleInput is the body of PUT /api/workspaces/{ws}/members/{personId}.
type memberRoleInput struct {
	Role string `json:"role" enum:"member,admin"`
}

// memberSetRole is PUT /api/workspaces/{ws}/members/{personId} {role} (admin of ws): 204.
func (a *API) memberSetRole(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	var in memberRoleInput
	if err := httpapi.Decode(w, r, &in); err != nil {
		return err
	}
	if err := a.People.MemberSetRole(r.Context(), p, r.PathValue("ws"), r.PathValue("personId"), in.Role); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// memberRemove is DELETE /api/workspaces/{ws}/members/{personId} (admin of ws): 204.
func (a *API) memberRemove(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if err := a.People.MemberRemove(r.Context(), p, r.PathValue("ws"), r.PathValue("personId")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// invitationRevoke is DELETE /api/workspaces/{ws}/invitations/{email} (admin of ws): 204.
func (a *API) invitationRevoke(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	if err := a.People.InvitationRevoke(r.Context(), p, r.PathValue("ws"), r.PathValue("email")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// me is GET /api/me (any role): the caller's subject and role, and their person's email and
// name when known (db.PersonLabels' rule: the person whose id is the subject, or a
// development sign-in's person).
func (a *API) me(w http.ResponseWriter, r *http.Request, p *auth.Principal) error {
	out := meAnswer{Subject: p.Subject, Role: p.Role}
	person, err := db.PersonOfSubject(r.Context(), a.Pool, p.Subject)
	switch {
	case err == nil:
		out.Email, out.Name = person.Email, person.Name
	case apperr.CodeOf(err) != apperr.NotFound:
		return err
	}
	httpapi.JSON(w, http.StatusOK, out)
	return nil
}

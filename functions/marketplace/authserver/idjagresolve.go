package authserver

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/db"
	"github.com/ory/fosite"
)

// person resolves the assertion's person: by (iss, sub) in people; else, when the
// provider links by email, by the assertion's email among people whose email was verified
// at sign-in. A person who never signed in is refused (they sign in once, or an admin
// adds them, before an identity provider can speak for them).
func (h *idjag) person(ctx context.Context, idp *db.TrustedIDP, cl *idjagClaims) (*db.Person, error) {
	p, err := db.PersonByIdentity(ctx, h.s.o.Pool, cl.Issuer, cl.Subject)
	if err == nil {
		return p, nil
	}
	if apperr.CodeOf(err) != apperr.NotFound {
		return nil, fosite.ErrServerError.WithWrap(err)
	}
	if idp.LinkByEmail && cl.Email != "" {
		p, err = db.PersonByVerifiedEmail(ctx, h.s.o.Pool, cl.Email)
		if err == nil {
			return p, nil
		}
		if apperr.CodeOf(err) != apperr.NotFound {
			return nil, fosite.ErrServerError.WithWrap(err)
		}
	}
	return nil, refuse("No person of this gateway is %q at %q%s: the person signs in to the gateway once first.",
		truncate(cl.Subject, 200), idp.Issuer, map[bool]string{true: " (nor has that verified email)", false: ""}[idp.LinkByEmail && cl.Email != ""])
}

// idjagResource checks the assertion's resource claim (a string or an array of strings;
// absent means the gateway's MCP resource) with the resource parameter's rule
// (Server.resource) and returns the workspace it names ("" for none) and the audience of
// the token. The resource parameter of the request, when given, must name the same
// workspace.
func (s *Server) idjagResource(r *http.Request, claim json.RawMessage) (hint string, aud []string, err error) {
	var res []string
	if len(claim) > 0 && string(claim) != "null" {
		var one string
		if json.Unmarshal(claim, &one) == nil {
			res = []string{one}
		} else if json.Unmarshal(claim, &res) != nil || len(res) == 0 {
			return "", nil, refuse("The assertion's resource is not a URL or a list of URLs.")
		}
	}
	r2 := r.Clone(r.Context())
	r2.Form = url.Values{"resource": res}
	r2.PostForm = nil
	if hint, err = s.resource(r2); err != nil {
		return "", nil, refuse("The assertion's resource is not this gateway's MCP endpoint (%s).", Resource(s.base(r)))
	}
	aud = r2.Form["audience"]
	if len(r.Form["resource"]) > 0 {
		r3 := r.Clone(r.Context())
		r3.Form = url.Values{"resource": r.Form["resource"]}
		r3.PostForm = nil
		other, err := s.resource(r3)
		if err != nil {
			return "", nil, err
		}
		if other != hint && other != "" && hint != "" {
			return "", nil, refuse("The resource parameter names another workspace than the assertion's resource.")
		}
		if hint == "" {
			hint = other
		}
	}
	return hint, aud, nil
}

// idjagWorkspace is the workspace and role of an enterprise grant: the one the resource
// names, else the person's only one. There is no page to choose on, so a person in several
// workspaces and no workspace named is refused with the way out.
func idjagWorkspace(ms []Membership, hint string) (ws, role string, err error) {
	var live []Membership
	for _, m := range ms {
		if m.Role == auth.RoleMember || m.Role == auth.RoleAdmin {
			live = append(live, m)
		}
	}
	switch {
	case len(live) == 0:
		return "", "", refuse("The person is not a member of any workspace of this gateway: a workspace admin adds them first.")
	case hint != "":
		for _, m := range live {
			if m.WorkspaceID == hint {
				return m.WorkspaceID, m.Role, nil
			}
		}
		return "", "", refuse("The person is not a member of workspace %s.", hint)
	case len(live) == 1:
		return live[0].WorkspaceID, live[0].Role, nil
	}
	return "", "", refuse("The person is a member of %d workspaces: the resource must name one (<issuer>/mcp/{workspaceId}).", len(live))
}

package identity

import (
	"context"
	"strings"
	"time"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/derrors"
)

// Member is one entry of a workspace's member list (the REST API's Member): a person with
// a membership (Status "active", Source "direct"), a person who is a member through a
// group role only (Source "group", Groups the matching groups: change it at the identity
// provider or in the group roles), or an invitation waiting for a first sign-in (Status
// "invited", Source "invitation", no PersonID).
type Member struct {
	PersonID     string     `json:"personId,omitempty" format:"uuid" doc:"The person; absent for an invitation."`
	Email        string     `json:"email"`
	Name         string     `json:"name,omitempty"`
	Role         string     `json:"role" enum:"member,admin"`
	Status       string     `json:"status" enum:"active,invited"`
	Source       string     `json:"source" enum:"direct,group,invitation" doc:"direct: a membership; group: a group role matched by the person's groups claim; invitation: waiting for a first sign-in."`
	Groups       []string   `json:"groups,omitempty" doc:"For source group: the matching groups."`
	LastSignInAt *time.Time `json:"lastSignInAt,omitempty"`
	CreatedAt    time.Time  `json:"createdAt"`
}

// requireWorkspaceAdmin is the rule of every membership change and of the member list: an
// admin of ws (or a superuser). Another workspace's admin is FORBIDDEN, like a member.
func requireWorkspaceAdmin(p *auth.Principal, ws string) error {
	if p == nil || !p.InWorkspace(ws) {
		return apperr.New(apperr.Forbidden, "you are not a member of this workspace")
	}
	return auth.RequireAdmin(p)
}

func checkRole(role string) error {
	if role != auth.RoleMember && role != auth.RoleAdmin {
		return apperr.New(apperr.Validation, "role must be %q or %q", auth.RoleMember, auth.RoleAdmin).
			WithHint("superuser is a platform flag, not a workspace role")
	}
	return nil
}

// normEmail returns email trimmed and lower-cased, or VALIDATION_ERROR when it is not one
// plain address of at most 320 bytes.
func normEmail(email string) (string, error) {
	e := strings.TrimSpace(email)
	if e == "" || len(e) > maxEmailLen || !validEmail(e) {
		return "", apperr.New(apperr.Validation, "email must be one address, such as ada@example.com")
	}
	return strings.ToLower(e), nil
}

func memberOf(m *db.Member) Member {
	out := Member{Email: m.Email, Name: m.Name, Role: m.Role, Status: m.Status, Source: m.Source,
		LastSignInAt: m.LastSignInAt, CreatedAt: m.CreatedAt}
	if m.PersonID != nil {
		out.PersonID = *m.PersonID
	}
	if len(m.Groups) > 0 {
		out.Groups = m.Groups
	}
	return out
}

// MemberList returns the members of workspace ws for p, an admin of ws: memberships, then
// members by group role, then invitations. FORBIDDEN for anyone else.
func (s *Service) MemberList(ctx context.Context, p *auth.Principal, ws string) (_ []Member, err error) {
	defer derrors.Wrap(&err, "identity.MemberList(%s)", ws)
	if err := requireWorkspaceAdmin(p, ws); err != nil {
		return nil, err
	}
	rows, err := db.MemberList(ctx, s.Pool, ws)
	if err != nil {
		return nil, err
	}
	out := make([]Member, 0, len(rows))
	for i := range rows {
		out = append(out, memberOf(&rows[i]))
	}
	return out, nil
}

// MemberAdd adds email to workspace ws with role, for p, an admin of ws: when a person with
// that verified email has signed in, a membership (Status "active"); else an invitation
// that the first sign-in with that verified email turns into a membership (Status
// "invited"). Errors: FORBIDDEN (not an admin of ws), VALIDATION_ERROR (email, role),
// CONFLICT (already a member or invited), NOT_FOUND (no such workspace); nothing is stored
// on error.
func (s *Service) MemberAdd(ctx context.Context, p *auth.Principal, ws, email, role string) (_ Member, err error) {
	defer derrors.Wrap(&err, "identity.MemberAdd(%s)", ws)
	if err := requireWorkspaceAdmin(p, ws); err != nil {
		return Member{}, err
	}
	if err := checkRole(role); err != nil {
		return Member{}, err
	}
	e, err := normEmail(email)
	if err != nil {
		return Member{}, err
	}
	var out Member
	err = db.InTx(ctx, s.Pool, func(tx db.Tx) error {
		if err := db.WorkspaceLock(ctx, tx, ws); err != nil {
			return notFoundAs(err, "no such workspace")
		}
		person, err := db.PersonByVerifiedEmail(ctx, tx, e)
		switch {
		case err == nil:
			if err := db.MembershipInsert(ctx, tx, ws, person.ID, role); err != nil {
				return conflictAs(err, "%s is a member of this workspace already", e)
			}
			out = Member{PersonID: person.ID, Email: person.Email, Name: person.Name, Role: role, Status: "active",
				Source: "direct", LastSignInAt: &person.LastSignInAt, CreatedAt: time.Now().UTC()}
			return nil
		case apperr.CodeOf(err) != apperr.NotFound:
			return err
		}
		var by *string // the inviting person, when the caller is one (a token's subject may not be)
		if inviter, err := db.PersonGet(ctx, tx, p.Subject); err == nil {
			by = &inviter.ID
		} else if apperr.CodeOf(err) != apperr.NotFound {
			return err
		}
		if err := db.InvitationInsert(ctx, tx, ws, e, role, by); err != nil {
			return conflictAs(err, "%s is invited to this workspace already", e)
		}
		out = Member{Email: e, Role: role, Status: "invited", Source: "invitation", CreatedAt: time.Now().UTC()}
		return nil
	})
	return out, err
}

// MemberSetRole sets the role of person personID in workspace ws, for p, an admin of ws.
// Errors: FORBIDDEN, VALIDATION_ERROR (role), NOT_FOUND (not a member by membership: a
// group's member changes at the identity provider), CONFLICT (it would leave the workspace
// without an admin).
func (s *Service) MemberSetRole(ctx context.Context, p *auth.Principal, ws, personID, role string) (err error) {
	defer derrors.Wrap(&err, "identity.MemberSetRole(%s, %s)", ws, personID)
	if err := requireWorkspaceAdmin(p, ws); err != nil {
		return err
	}
	if err := checkRole(role); err != nil {
		return err
	}
	return db.InTx(ctx, s.Pool, func(tx db.Tx) error {
		if err := db.WorkspaceLock(ctx, tx, ws); err != nil {
			return notFoundAs(err, "no such workspace")
		}
		old, err := db.MembershipGet(ctx, tx, ws, personID)
		if err != nil {
			return notFoundAs(err, "this person is not a member of this workspace")
		}
		if old == auth.RoleAdmin && role != auth.RoleAdmin {
			if err := keepAnAdmin(ctx, tx, ws); err != nil {
				return err
			}
		}
		return db.MembershipSetRole(ctx, tx, ws, personID, role)
	})
}

// MemberRemove removes person personID from workspace ws, for p, an admin of ws; the
// person's next token or refresh no longer names ws. Errors: FORBIDDEN, NOT_FOUND (not a
// member by membership), CONFLICT (the last admin).
func (s *Service) MemberRemove(ctx context.Context, p *auth.Principal, ws, personID string) (err error) {
	defer derrors.Wrap(&err, "identity.MemberRemove(%s, %s)", ws, personID)
	if err := requireWorkspaceAdmin(p, ws); err != nil {
		return err
	}
	return db.InTx(ctx, s.Pool, func(tx db.Tx) error {
		if err := db.WorkspaceLock(ctx, tx, ws); err != nil {
			return notFoundAs(err, "no such workspace")
		}
		old, err := db.MembershipGet(ctx, tx, ws, personID)
		if err != nil {
			return notFoundAs(err, "this person is not a member of this workspace")
		}
		if old == auth.RoleAdmin {
			if err := keepAnAdmin(ctx, tx, ws); err != nil {
				return err
			}
		}
		return db.MembershipDelete(ctx, tx, ws, personID)
	})
}

// InvitationRevoke withdraws the invitation of email to workspace ws, for p, an admin of
// ws. Errors: FORBIDDEN, VALIDATION_ERROR (email), NOT_FOUND (no such invitation).
func (s *Service) InvitationRevoke(ctx context.Context, p *auth.Principal, ws, email string) (err error) {
	defer derrors.Wrap(&err, "identity.InvitationRevoke(%s)", ws)
	if err := requireWorkspaceAdmin(p, ws); err != nil {
		return err
	}
	e, err := normEmail(email)
	if err != nil {
		return err
	}
	return notFoundAs(db.InvitationDelete(ctx, s.Pool, ws, e), "no invitation for %s in this workspace", e)
}

// keepAnAdmin refuses (CONFLICT) a change that takes away ws's only admin.
func keepAnAdmin(ctx context.Context, tx db.Tx, ws string) error {
	n, err := db.MembershipAdminCount(ctx, tx, ws)
	if err != nil {
		return err
	}
	if n <= 1 {
		return apperr.New(apperr.Conflict, "a workspace keeps at least one admin").
			WithHint("make another member admin first")
	}
	return nil
}

// notFoundAs gives a NOT_FOUND err the public message msg; other errors pass unchanged.
func notFoundAs(err error, format string, args ...any) error {
	if apperr.CodeOf(err) == apperr.NotFound {
		return apperr.Wrap(err, apperr.NotFound, format, args...)
	}
	return err
}

// conflictAs gives a CONFLICT err the public message msg; other errors pass unchanged.
func conflictAs(err error, format string, args ...any) error {
	if apperr.CodeOf(err) == apperr.Conflict {
		return apperr.Wrap(err, apperr.Conflict, format, args...)
	}
	return err
}

// DevIssuer is the issuer of the people the development sign-in creates (cmd/local only).
const DevIssuer = db.DevSignInIssuer

// DevSignIn records the development sign-in of principal dp (`make run`'s link): a person
// (DevIssuer, dp.Subject) named after it, a member of each of dp.Workspaces with dp.Role
// (admin for a superuser, which also gets the platform flag). It returns the person, for
// Sessions.Set, so that the development sign-in and the identity provider's lead to the
// one session rule. Never wired in a Lambda function.
func (s *Service) DevSignIn(ctx context.Context, dp auth.Principal) (_ Person, err error) {
	defer derrors.Wrap(&err, "identity.DevSignIn(%s)", dp.Subject)
	var out Person
	err = db.InTx(ctx, s.Pool, func(tx db.Tx) error {
		row, err := db.PersonUpsert(ctx, tx, &db.Person{Issuer: DevIssuer, Subject: dp.Subject,
			Email: dp.Subject + "@dev.invalid", Name: "Development " + dp.Role})
		if err != nil {
			return err
		}
		role := dp.Role
		if role == auth.RoleSuperuser {
			role = auth.RoleAdmin
		}
		for _, ws := range dp.Workspaces {
			if err := db.MembershipUpsert(ctx, tx, ws, row.ID, role); err != nil {
				return err
			}
		}
		if err := db.PersonSetSuperuser(ctx, tx, row.ID, dp.Role == auth.RoleSuperuser); err != nil {
			return err
		}
		out = personOf(row)
		return nil
	})
	return out, err
}

// Package identity is who a person is and where they belong (docs/AUTH.md "Signing in: the
// organisation's identity provider"): people signed in through the organisation's identity
// provider by OpenID Connect, their memberships in workspaces kept in Postgres, invitations
// by email before a first sign-in, optional group-to-role mappings, and the one browser
// session rule every page of the gateway relies on (Sessions).
//
// The source of truth for "is this person still a member, and with which role" is
// Service.Memberships: the gateway's authorization server asks it at every token and
// refresh, so a removed member loses access at the next refresh at the latest.
package identity

import (
	"context"
	"errors"
	"net/mail"
	"slices"
	"strings"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/derrors"
)

// Person is a signed-in human: ID is the gateway's own id (a UUID, the `sub` of the tokens
// the gateway issues); Issuer and Subject are the identity provider's `iss` and `sub` (the
// pair is unique); Email and Name are those of the last sign-in. Groups are the identity
// provider's groups claim as of the last sign-in; Sessions.Person leaves Groups nil (the
// cookie stays small: Entra may send 200 group ids), Service.Person fills it.
type Person struct {
	ID      string
	Issuer  string
	Subject string
	Email   string
	Name    string
	Groups  []string
	// Superuser is the platform flag (Service.Person fills it; a session does not carry it).
	Superuser bool
}

// Membership is a person's role in one workspace: auth.RoleMember or auth.RoleAdmin.
// Superuser is not a membership but a platform flag on the person (set by an operator in
// the people table), which Service.Principal turns into auth.RoleSuperuser.
type Membership struct {
	WorkspaceID string
	Role        string
}

// Claims is what a sign-in learnt about a person from the identity provider (or from the
// development sign-in): the ID token's iss, sub, email, email_verified, name and groups.
type Claims struct {
	Issuer        string
	Subject       string
	Email         string
	EmailVerified bool
	Name          string
	Groups        []string
}

// ErrNoMembership is wrapped by Service.Principal when the person is a member of no
// workspace (or not of the one asked for) and not a superuser: the page that answers it
// says so plainly instead of showing an empty workspace.
var ErrNoMembership = errors.New("identity: no membership")

// Bounds of what a sign-in stores (the columns' checks in migrations/00024_people.sql).
const (
	maxGroups    = 500
	maxGroupLen  = 255
	maxEmailLen  = 320
	maxNameLen   = 512
	maxIssuerLen = 2048
	maxSubLen    = 255
)

// Service reads and writes people and memberships in Postgres.
type Service struct {
	Pool *db.Pool
}

// SignIn records a sign-in: it creates or updates the person (Issuer, Subject), and when
// the email is verified turns the invitations of that email into memberships, in one
// transaction. It returns the person. Claims without issuer or subject, or over the bounds
// (issuer 2048, subject 255, email 320, name 512 bytes; 500 groups of 255 bytes), are
// VALIDATION_ERROR and store nothing; an unverified email is kept but claims no invitation
// (anyone can put any address in an account at some providers).
func (s *Service) SignIn(ctx context.Context, c Claims) (_ Person, err error) {
	defer derrors.Wrap(&err, "identity.SignIn")
	if err := c.check(); err != nil {
		return Person{}, err
	}
	var out Person
	err = db.InTx(ctx, s.Pool, func(tx db.Tx) error {
		row, err := db.PersonUpsert(ctx, tx, &db.Person{Issuer: c.Issuer, Subject: c.Subject,
			Email: strings.TrimSpace(c.Email), EmailVerified: c.EmailVerified, Name: c.Name, Groups: c.Groups})
		if err != nil {
			return err
		}
		if c.EmailVerified && row.Email != "" {
			n, err := db.InvitationsClaim(ctx, tx, row.ID, strings.ToLower(row.Email))
			if err != nil {
				return err
			}
			if n > 0 && !row.Superuser { // a claimed invitation may carry the superuser flag
				if row, err = db.PersonGet(ctx, tx, row.ID); err != nil {
					return err
				}
			}
		}
		out = personOf(row)
		return nil
	})
	return out, err
}

func (c *Claims) check() error {
	bad := func(what string) error { return apperr.New(apperr.Validation, "sign-in: %s", what) }
	switch {
	case c.Issuer == "" || c.Subject == "":
		return bad("the identity provider's answer has no issuer or subject")
	case len(c.Issuer) > maxIssuerLen || len(c.Subject) > maxSubLen:
		return bad("the issuer or subject is too long")
	case len(c.Email) > maxEmailLen || len(c.Name) > maxNameLen:
		return bad("the email or name is too long")
	case len(c.Groups) > maxGroups:
		return bad("too many groups")
	case slices.ContainsFunc(c.Groups, func(g string) bool { return g == "" || len(g) > maxGroupLen }):
		return bad("a group name is empty or too long")
	}
	if e := strings.TrimSpace(c.Email); e != "" && !validEmail(e) {
		return bad("the email is not an address")
	}
	return nil
}

// validEmail reports whether e is one plain address (no display name, no angle brackets).
func validEmail(e string) bool {
	a, err := mail.ParseAddress(e)
	return err == nil && a.Address == e && a.Name == ""
}

func personOf(p *db.Person) Person {
	return Person{ID: p.ID, Issuer: p.Issuer, Subject: p.Subject, Email: p.Email, Name: p.Name, Groups: p.Groups, Superuser: p.Superuser}
}

// Person returns the person id with its groups as of the last sign-in, or NOT_FOUND.
func (s *Service) Person(ctx context.Context, id string) (_ Person, err error) {
	defer derrors.Wrap(&err, "identity.Person(%s)", id)
	p, err := db.PersonGet(ctx, s.Pool, id)
	if err != nil {
		return Person{}, err
	}
	return personOf(p), nil
}

// Superuser reports whether personID has the platform flag (read from Postgres now; an
// unknown person is NOT_FOUND). The authorization server gives the console's tokens of a
// superuser auth.RoleSuperuser by it, as Principal does (docs/AUTH.md "The console").
func (s *Service) Superuser(ctx context.Context, personID string) (_ bool, err error) {
	defer derrors.Wrap(&err, "identity.Superuser(%s)", personID)
	p, err := db.PersonGet(ctx, s.Pool, personID)
	if err != nil {
		return false, err
	}
	return p.Superuser, nil
}

// Groups returns personID's identity-provider groups as of its last sign-in (nil when the
// sign-in carried none); an unknown person is NOT_FOUND. The authorization server copies
// them into the access tokens it issues (docs/AUTH.md "Tokens").
func (s *Service) Groups(ctx context.Context, personID string) (_ []string, err error) {
	defer derrors.Wrap(&err, "identity.Groups(%s)", personID)
	p, err := db.PersonGet(ctx, s.Pool, personID)
	if err != nil {
		return nil, err
	}
	if len(p.Groups) == 0 {
		return nil, nil
	}
	return p.Groups, nil
}

// Memberships returns the workspaces personID belongs to and its role in each
// (auth.RoleMember or auth.RoleAdmin), ordered by workspace id: its memberships and the
// roles its groups (as of its last sign-in) are mapped to, the higher role winning. An
// unknown person has none (an empty slice, no error). This is the source of truth the
// authorization server asks at every token and refresh.
func (s *Service) Memberships(ctx context.Context, personID string) (_ []Membership, err error) {
	defer derrors.Wrap(&err, "identity.Memberships(%s)", personID)
	rows, err := db.MembershipsOfPerson(ctx, s.Pool, personID)
	if err != nil {
		return nil, err
	}
	out := make([]Membership, 0, len(rows))
	for _, r := range rows {
		out = append(out, Membership{WorkspaceID: r.WorkspaceID, Role: r.Role})
	}
	return out, nil
}

// Principal returns the auth.Principal personID acts as — the subject, role and workspaces
// today's JWTs carry, so that the edge and the access rules stay as they are:
//   - a superuser: RoleSuperuser, with every workspace it is a member of;
//   - workspace != "": its role in that workspace and Workspaces [workspace];
//   - workspace == "": every workspace it is a member of, with the lowest of its roles
//     there (one role applies to all the listed workspaces, so an admin of A and member of
//     B is a member of both here; ask per workspace for admin rights).
//
// The Subject is the person's ID. A person with no membership (in workspace, when given)
// is FORBIDDEN wrapping ErrNoMembership; an unknown person is NOT_FOUND.
func (s *Service) Principal(ctx context.Context, personID, workspace string) (_ *auth.Principal, err error) {
	defer derrors.Wrap(&err, "identity.Principal(%s, %s)", personID, workspace)
	p, err := db.PersonGet(ctx, s.Pool, personID)
	if err != nil {
		return nil, err
	}
	ms, err := db.MembershipsOfPerson(ctx, s.Pool, p.ID)
	if err != nil {
		return nil, err
	}
	out := &auth.Principal{Subject: p.ID, Role: auth.RoleAdmin}
	if len(p.Groups) > 0 {
		out.Groups = p.Groups
	}
	for _, m := range ms {
		if workspace != "" && m.WorkspaceID != workspace {
			continue
		}
		out.Workspaces = append(out.Workspaces, m.WorkspaceID)
		if m.Role == auth.RoleMember {
			out.Role = auth.RoleMember
		}
	}
	switch {
	case p.Superuser:
		out.Role = auth.RoleSuperuser
		if workspace != "" {
			out.Workspaces = []string{workspace}
		}
	case len(out.Workspaces) == 0:
		msg := "you are not a member of any workspace yet: ask an admin of your workspace to add you"
		if workspace != "" {
			msg = "you are not a member of this workspace"
		}
		return nil, apperr.Wrap(ErrNoMembership, apperr.Forbidden, "%s", msg)
	}
	return out, nil
}

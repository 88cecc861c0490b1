package db

import (
	"context"
	"time"
)

// People, memberships, invitations and group roles (migrations/00024_people.sql).

// Person is a row of people: the identity provider's issuer and subject, with the email,
// name and groups of the last sign-in.
type Person struct {
	ID            string    `db:"id"`
	Issuer        string    `db:"issuer"`
	Subject       string    `db:"subject"`
	Email         string    `db:"email"`
	EmailVerified bool      `db:"email_verified"`
	Name          string    `db:"name"`
	Groups        []string  `db:"groups"`
	Superuser     bool      `db:"superuser"`
	CreatedAt     time.Time `db:"created_at"`
	LastSignInAt  time.Time `db:"last_sign_in_at"`
}

const personCols = `id, issuer, subject, email, email_verified, name, groups, superuser, created_at, last_sign_in_at`

// PersonUpsert records a sign-in of (p.Issuer, p.Subject): it inserts the person, or
// updates the email, email_verified, name and groups of the existing row and its
// last_sign_in_at, and returns the row. p.ID and p.Superuser are ignored (superuser is an
// operator's flag). A value over its column's bound is VALIDATION_ERROR.
func PersonUpsert(ctx context.Context, q Querier, p *Person) (*Person, error) {
	groups := p.Groups
	if groups == nil {
		groups = []string{}
	}
	return one[Person](ctx, q, `INSERT INTO people (issuer, subject, email, email_verified, name, groups)
		VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (issuer, subject) DO UPDATE SET email = EXCLUDED.email,
			email_verified = EXCLUDED.email_verified, name = EXCLUDED.name, groups = EXCLUDED.groups,
			last_sign_in_at = now()
		RETURNING `+personCols, p.Issuer, p.Subject, p.Email, p.EmailVerified, p.Name, groups)
}

// PersonGet returns the person id, or NOT_FOUND (also for an id that is not a UUID).
func PersonGet(ctx context.Context, q Querier, id string) (*Person, error) {
	if !IsUUID(id) {
		return nil, notFound()
	}
	return one[Person](ctx, q, `SELECT `+personCols+` FROM people WHERE id = $1`, id)
}

// PersonByVerifiedEmail returns the person whose verified email is email (compared
// lower-case), the most recent sign-in first when several identities share it, or
// NOT_FOUND.
func PersonByVerifiedEmail(ctx context.Context, q Querier, email string) (*Person, error) {
	return one[Person](ctx, q, `SELECT `+personCols+` FROM people
		WHERE lower(email) = lower($1) AND email <> '' AND email_verified
		ORDER BY last_sign_in_at DESC LIMIT 1`, email)
}

// MembershipRole is a person's role in one workspace.
type MembershipRole struct {
	WorkspaceID string `db:"workspace_id"`
	Role        string `db:"role"`
}

// MembershipsOfPerson returns personID's effective roles, one per workspace, ordered by
// workspace id: its memberships and the group roles matched by its groups (as of its last
// sign-in), the higher role winning ("admin" over "member"). An unknown person has none.
func MembershipsOfPerson(ctx context.Context, q Querier, personID string) ([]MembershipRole, error) {
	if !IsUUID(personID) {
		return nil, nil
	}
	return collect[MembershipRole](ctx, q, `SELECT workspace_id::text AS workspace_id,
			CASE WHEN bool_or(role = 'admin') THEN 'admin' ELSE 'member' END AS role
		FROM (
			SELECT workspace_id, role FROM memberships WHERE person_id = $1
			UNION ALL
			SELECT g.workspace_id, g.role FROM group_roles g JOIN people p ON g.group_name = ANY(p.groups)
			WHERE p.id = $1
		) m GROUP BY workspace_id ORDER BY workspace_id`, personID)
}

// InvitationsClaim turns every invitation of email (lower-case) into a membership of
// personID and deletes them, in one statement; an existing membership keeps the higher of
// its role and the invitation's. It returns how many invitations it claimed.
func InvitationsClaim(ctx context.Context, q Querier, personID, email string) (int64, error) {
	tag, err := q.Exec(ctx, `WITH claimed AS (
			DELETE FROM invitations WHERE email = lower($2) RETURNING workspace_id, role)
		INSERT INTO memberships (workspace_id, person_id, role)
		SELECT workspace_id, $1, role FROM claimed
		ON CONFLICT (workspace_id, person_id) DO UPDATE
			SET role = CASE WHEN EXCLUDED.role = 'admin' THEN 'admin' ELSE memberships.role END,
				updated_at = now()`, personID, email)
	return tag.RowsAffected(), Interpret(err)
}

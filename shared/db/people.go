package db

import (
	"context"
	"time"

	"github.com/agentpack/gateway/shared/apperr"
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
// its role and the invitation's. An invitation with the superuser flag (the deploy's first
// admin, FirstAdminGrant) also makes the person a superuser. It returns how many
// invitations it claimed.
func InvitationsClaim(ctx context.Context, q Querier, personID, email string) (int64, error) {
	tag, err := q.Exec(ctx, `WITH claimed AS (
			DELETE FROM invitations WHERE email = lower($2) RETURNING workspace_id, role, superuser),
		su AS (
			UPDATE people SET superuser = true WHERE id = $1 AND EXISTS (SELECT 1 FROM claimed WHERE superuser))
		INSERT INTO memberships (workspace_id, person_id, role)
		SELECT workspace_id, $1, role FROM claimed
		ON CONFLICT (workspace_id, person_id) DO UPDATE
			SET role = CASE WHEN EXCLUDED.role = 'admin' THEN 'admin' ELSE memberships.role END,
				updated_at = now()`, personID, email)
	return tag.RowsAffected(), Interpret(err)
}

// PersonSetSuperuser sets the platform flag of person id (operators and the development
// sign-in only; the REST API never does); NOT_FOUND when there is no such person.
func PersonSetSuperuser(ctx context.Context, q Querier, id string, on bool) error {
	if !IsUUID(id) {
		return notFound()
	}
	tag, err := q.Exec(ctx, `UPDATE people SET superuser = $2 WHERE id = $1`, id, on)
	if err != nil {
		return Interpret(err)
	}
	if tag.RowsAffected() == 0 {
		return notFound()
	}
	return nil
}

// WorkspaceLock locks workspace ws's row until tx ends (SELECT … FOR UPDATE), so that
// membership changes of one workspace serialise (the last-admin rule); NOT_FOUND when
// there is no such workspace.
func WorkspaceLock(ctx context.Context, tx Tx, ws string) error {
	if !IsUUID(ws) {
		return notFound()
	}
	var id string
	return Interpret(tx.QueryRow(ctx, `SELECT id::text FROM workspaces WHERE id = $1 FOR UPDATE`, ws).Scan(&id))
}

// Member is one row of a workspace's member list: a person with a membership (Status
// "active", Source "direct"), a person whose groups give a role (Status "active", Source
// "group", Groups the matching groups), or an invitation (Status "invited", no PersonID).
type Member struct {
	PersonID     *string    `db:"person_id"`
	Email        string     `db:"email"`
	Name         string     `db:"name"`
	Role         string     `db:"role"`
	Status       string     `db:"status"`
	Source       string     `db:"source"`
	Groups       []string   `db:"groups"`
	LastSignInAt *time.Time `db:"last_sign_in_at"`
	CreatedAt    time.Time  `db:"created_at"`
}

// MemberList returns workspace ws's members: memberships, then people who are members by
// a group role only, then invitations; each part by email.
func MemberList(ctx context.Context, q Querier, ws string) ([]Member, error) {
	if !IsUUID(ws) {
		return nil, nil
	}
	return collect[Member](ctx, q, `
		SELECT person_id, email, name, role, status, source, groups, last_sign_in_at, created_at FROM (
			SELECT p.id::text AS person_id, p.email, p.name, m.role, 'active' AS status, 'direct' AS source,
				'{}'::text[] AS groups, p.last_sign_in_at, m.created_at, 0 AS part
			FROM memberships m JOIN people p ON p.id = m.person_id WHERE m.workspace_id = $1
			UNION ALL
			SELECT p.id::text, p.email, p.name,
				CASE WHEN bool_or(g.role = 'admin') THEN 'admin' ELSE 'member' END, 'active', 'group',
				array_agg(g.group_name ORDER BY g.group_name), p.last_sign_in_at, min(g.created_at), 1
			FROM group_roles g JOIN people p ON g.group_name = ANY(p.groups)
			WHERE g.workspace_id = $1
				AND NOT EXISTS (SELECT 1 FROM memberships m WHERE m.workspace_id = $1 AND m.person_id = p.id)
			GROUP BY p.id
			UNION ALL
			SELECT NULL, i.email, '', i.role, 'invited', 'invitation', '{}'::text[], NULL, i.created_at, 2
			FROM invitations i WHERE i.workspace_id = $1
		) x ORDER BY part, lower(email), person_id`, ws)
}

// MembershipGet returns the direct role of personID in ws, or NOT_FOUND.
func MembershipGet(ctx context.Context, q Querier, ws, personID string) (string, error) {
	if !IsUUID(ws) || !IsUUID(personID) {
		return "", notFound()
	}
	var role string
	err := q.QueryRow(ctx, `SELECT role FROM memberships WHERE workspace_id = $1 AND person_id = $2`, ws, personID).Scan(&role)
	return role, Interpret(err)
}

// MembershipInsert adds personID to ws with role; CONFLICT when it is a member already,
// INVALID_REFERENCE when the workspace or person does not exist.
func MembershipInsert(ctx context.Context, q Querier, ws, personID, role string) error {
	_, err := q.Exec(ctx, `INSERT INTO memberships (workspace_id, person_id, role) VALUES ($1, $2, $3)`, ws, personID, role)
	return Interpret(err)
}

// MembershipUpsert sets personID's role in ws, adding the membership when there is none.
func MembershipUpsert(ctx context.Context, q Querier, ws, personID, role string) error {
	_, err := q.Exec(ctx, `INSERT INTO memberships (workspace_id, person_id, role) VALUES ($1, $2, $3)
		ON CONFLICT (workspace_id, person_id) DO UPDATE SET role = EXCLUDED.role, updated_at = now()`, ws, personID, role)
	return Interpret(err)
}

// MembershipSetRole sets personID's role in ws; NOT_FOUND when it is not a member.
func MembershipSetRole(ctx context.Context, q Querier, ws, personID, role string) error {
	if !IsUUID(ws) || !IsUUID(personID) {
		return notFound()
	}
	tag, err := q.Exec(ctx, `UPDATE memberships SET role = $3, updated_at = now() WHERE workspace_id = $1 AND person_id = $2`, ws, personID, role)
	if err != nil {
		return Interpret(err)
	}
	if tag.RowsAffected() == 0 {
		return notFound()
	}
	return nil
}

// MembershipDelete removes personID from ws; NOT_FOUND when it is not a member.
func MembershipDelete(ctx context.Context, q Querier, ws, personID string) error {
	if !IsUUID(ws) || !IsUUID(personID) {
		return notFound()
	}
	tag, err := q.Exec(ctx, `DELETE FROM memberships WHERE workspace_id = $1 AND person_id = $2`, ws, personID)
	if err != nil {
		return Interpret(err)
	}
	if tag.RowsAffected() == 0 {
		return notFound()
	}
	return nil
}

// MembershipAdminCount returns how many direct admins ws has.
func MembershipAdminCount(ctx context.Context, q Querier, ws string) (int, error) {
	var n int
	err := q.QueryRow(ctx, `SELECT count(*) FROM memberships WHERE workspace_id = $1 AND role = 'admin'`, ws).Scan(&n)
	return n, Interpret(err)
}

// InvitationInsert invites email (lower-case) to ws with role, by invitedBy (nil: not a
// person); CONFLICT when that email is invited already.
func InvitationInsert(ctx context.Context, q Querier, ws, email, role string, invitedBy *string) error {
	_, err := q.Exec(ctx, `INSERT INTO invitations (workspace_id, email, role, invited_by) VALUES ($1, lower($2), $3, $4)`,
		ws, email, role, invitedBy)
	return Interpret(err)
}

// InvitationEnsure invites email to ws with role unless a person with that verified email
// exists or the invitation exists (the development seed); it reports whether it invited.
func InvitationEnsure(ctx context.Context, q Querier, ws, email, role string) (bool, error) {
	tag, err := q.Exec(ctx, `INSERT INTO invitations (workspace_id, email, role)
		SELECT $1, lower($2), $3 WHERE NOT EXISTS (
			SELECT 1 FROM people WHERE lower(email) = lower($2) AND email_verified)
		ON CONFLICT (workspace_id, email) DO NOTHING`, ws, email, role)
	return tag.RowsAffected() == 1, Interpret(err)
}

// InvitationDelete withdraws the invitation of email to ws; NOT_FOUND when there is none.
func InvitationDelete(ctx context.Context, q Querier, ws, email string) error {
	if !IsUUID(ws) {
		return notFound()
	}
	tag, err := q.Exec(ctx, `DELETE FROM invitations WHERE workspace_id = $1 AND email = lower($2)`, ws, email)
	if err != nil {
		return Interpret(err)
	}
	if tag.RowsAffected() == 0 {
		return notFound()
	}
	return nil
}

// DevSignInIssuer is the issuer of the people `make run`'s development sign-in records
// (identity.DevIssuer): their token subject is the person's subject ("dev-admin"), not
// their id.
const DevSignInIssuer = "urn:agentpack:dev-sign-in"

// personLabelJoin is a LEFT JOIN LATERAL that gives key (an SQL expression: a token
// subject) its person's label as pl.label: the email, else the name, of the person whose
// id is key (the subject of the gateway's authorization server's tokens) or, for a
// development sign-in, whose subject is key; NULL when no such person is known. One index
// probe per key (the primary key, or people's (issuer, subject) key).
func personLabelJoin(key string) string {
	return ` LEFT JOIN LATERAL (SELECT CASE WHEN pe.email <> '' THEN pe.email ELSE nullif(pe.name, '') END AS label
		FROM people pe
		WHERE pe.id = (CASE WHEN ` + key + ` ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN (` + key + `)::uuid END)
		   OR (pe.issuer = '` + DevSignInIssuer + `' AND pe.subject = ` + key + `)
		LIMIT 1) pl ON true`
}

// PersonLabels returns, for each of subjects (token subjects) whose person is known, its
// label (email, else name; personLabelJoin), in one statement. Unknown subjects, and
// people with neither, are absent.
func PersonLabels(ctx context.Context, q Querier, subjects []string) (map[string]string, error) {
	out := map[string]string{}
	if len(subjects) == 0 {
		return out, nil
	}
	type row struct {
		Key   string `db:"key"`
		Label string `db:"label"`
	}
	rows, err := collect[row](ctx, q, `SELECT s.key, pl.label FROM unnest($1::text[]) AS s(key)`+personLabelJoin("s.key")+
		` WHERE pl.label IS NOT NULL`, subjects)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		out[r.Key] = r.Label
	}
	return out, nil
}

// PersonOfSubject returns the person a token subject names (the person whose id it is, or
// a development sign-in's person with that subject; personLabelJoin's rule), or NOT_FOUND.
func PersonOfSubject(ctx context.Context, q Querier, subject string) (*Person, error) {
	if IsUUID(subject) {
		if p, err := PersonGet(ctx, q, subject); err == nil || apperr.CodeOf(err) != apperr.NotFound {
			return p, err
		}
	}
	return one[Person](ctx, q, `SELECT `+personCols+` FROM people WHERE issuer = $1 AND subject = $2`, DevSignInIssuer, subject)
}

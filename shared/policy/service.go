package policy

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"time"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/catalog"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/derrors"
)

// MaxText is the largest policy document accepted, in bytes (the column's CHECK).
const MaxText = 64 << 10

// Service is the admin side of the access policies (REST /api/policies*, docs/POLICIES.md):
// read, validate, save (with the lock-out rule) and "what if". Each save is an event_log
// entry and rebuilds the catalog documents that carry the policies (the workspace's; every
// workspace's for the global document). Pool is required; without Store nothing is
// republished (CatalogPending).
type Service struct {
	Pool   *db.Pool
	Store  catalog.Store
	Logger *slog.Logger
	// OnCatalogChange is called after documents were rebuilt (nil workspaces: all), as
	// connections.Service does.
	OnCatalogChange func(workspaces []string)
}

// View is a stored policy document as the API shows it (to admins: members are refused).
type View struct {
	WorkspaceID *string    `json:"workspaceId" doc:"null: the global document."` // null: the global document
	Text        string     `json:"text"`
	PolicyIDs   []string   `json:"policyIds"`
	UpdatedBy   string     `json:"updatedBy,omitempty"`
	UpdatedAt   *time.Time `json:"updatedAt,omitempty"`
	// CatalogPending: saved, but the catalog documents could not be rebuilt yet (the
	// gateway decides with the previous policies until the next rebuild).
	CatalogPending bool `json:"catalogPending,omitempty" doc:"Saved, but the catalog could not be republished yet: the gateway decides with the previous policies until the next rebuild."`
	// Warnings: what the saved document does that is probably not meant (Warnings).
	Warnings []string `json:"warnings,omitempty" doc:"What the saved document does that is probably not meant: a role left with no tool of the workspace at all (its members' tools/list is empty). Saved anyway."`
}

func viewOf(ws *string, row *db.AccessPolicy) *View {
	v := &View{WorkspaceID: ws, PolicyIDs: []string{}}
	if row == nil {
		return v
	}
	v.Text, v.UpdatedBy, v.UpdatedAt = row.Text, row.UpdatedBy, &row.UpdatedAt
	if s, err := Parse(row.Text); err == nil {
		v.PolicyIDs = s.IDs()
	}
	return v
}

// checkWorkspace: p is an admin of ws.
func checkWorkspace(p *auth.Principal, ws string) error {
	if err := auth.RequireAdmin(p); err != nil {
		return err
	}
	if ws == "" {
		return apperr.New(apperr.Validation, "workspaceId is required").WithDetails(map[string]string{"field": "workspaceId"}).
			WithHint("the token names no single workspace")
	}
	if !db.IsUUID(ws) || !p.InWorkspace(ws) {
		return apperr.New(apperr.NotFound, "workspace not found")
	}
	return nil
}

func requireSuperuser(p *auth.Principal) error {
	if !p.IsSuperuser() {
		return apperr.New(apperr.Forbidden, "the global policy document is written by superusers only")
	}
	return nil
}

// Get returns workspace ws's document (ws "" with global: the global one). Errors:
// FORBIDDEN (not an admin; the global document's writes need a superuser, its reads an
// admin), NOT_FOUND (a workspace p is not in), UNAVAILABLE.
func (s *Service) Get(ctx context.Context, p *auth.Principal, ws string, global bool) (_ *View, err error) {
	defer derrors.Wrap(&err, "policies: get %s", ws)
	var key *string
	if global {
		if err := auth.RequireAdmin(p); err != nil {
			return nil, err
		}
	} else {
		if err := checkWorkspace(p, ws); err != nil {
			return nil, err
		}
		key = &ws
	}
	row, err := db.AccessPolicyGet(ctx, s.Pool, key)
	if apperr.CodeOf(err) == apperr.NotFound {
		return viewOf(key, nil), nil
	}
	if err != nil {
		return nil, err
	}
	return viewOf(key, row), nil
}

// invalid is the 400 of a document that does not parse or validate: the first problem's
// place in the message, every problem in details.problems.
func invalid(err error) error {
	var inv *InvalidError
	if !errors.As(err, &inv) {
		return err
	}
	msg := "the policy document is not valid"
	if len(inv.Problems) > 0 {
		p := inv.Problems[0]
		msg = "line " + itoa(p.Line) + ", column " + itoa(p.Column) + ": " + p.Message
	}
	return apperr.New(apperr.Validation, "%s", msg).WithDetails(map[string]any{"problems": inv.Problems}).
		WithHint("nothing was saved; fix the document and save again")
}

func itoa(n int) string { return strconv.Itoa(n) }

// schemaOf builds workspace ws's validation schema from Postgres (catalog.Build: the tools
// as the gateway lists them, overrides applied).
func (s *Service) schemaOf(ctx context.Context, ws string) (*Schema, error) {
	doc, err := catalog.Build(ctx, s.Pool, ws)
	if err != nil {
		return nil, err
	}
	return SchemaFor(doc), nil
}

// Check validates text for workspace ws (global: the global document) without saving it:
// nil when valid, else VALIDATION_ERROR with details.problems (line, column, policyId,
// message). Errors besides: FORBIDDEN, NOT_FOUND, UNAVAILABLE.
func (s *Service) Check(ctx context.Context, p *auth.Principal, ws string, global bool, text string) (_ *Set, err error) {
	defer derrors.Wrap(&err, "policies: check %s", ws)
	if global {
		if err := auth.RequireAdmin(p); err != nil {
			return nil, err
		}
	} else if err := checkWorkspace(p, ws); err != nil {
		return nil, err
	}
	if len(text) > MaxText {
		return nil, apperr.New(apperr.Validation, "the policy document is over %d bytes", MaxText)
	}
	sch := GlobalSchema()
	if !global {
		if sch, err = s.schemaOf(ctx, ws); err != nil {
			return nil, err
		}
	}
	set, err := Check(text, sch)
	if err != nil {
		return nil, invalid(err)
	}
	return set, nil
}

// Warnings returns what workspace ws's document set would do that is probably not meant,
// as sentences for the admin (nil: nothing): for each role (member, admin; a principal of
// no identity-provider group, on the aggregate endpoint) under which not one of the
// workspace's proxied tools may be listed, while the workspace has some, "under this
// document the member role can list no tool …" — every such member's tools/list would be
// empty. The global document gets none (it has no tools of its own). Errors: UNAVAILABLE.
func (s *Service) Warnings(ctx context.Context, ws string, global bool, set *Set) (_ []string, err error) {
	defer derrors.Wrap(&err, "policy: warnings for %s", ws)
	if global {
		return nil, nil
	}
	doc, err := catalog.Build(ctx, s.Pool, ws)
	if err != nil {
		return nil, err
	}
	return emptyRoles(doc, ws, set), nil
}

// emptyRoles is Warnings over doc with set as the workspace's document.
func emptyRoles(doc *catalog.Document, ws string, set *Set) []string {
	e := &Engine{Workspace: set}
	if doc.Policies != nil {
		e.Global, _ = Parse(doc.Policies.Global)
	}
	var tools []Resource
	for i := range doc.Connections {
		c := &doc.Connections[i]
		for j := range c.Tools {
			if t := &c.Tools[j]; t.Served() {
				tools = append(tools, ToolResource(c, t))
			}
		}
	}
	if len(tools) == 0 {
		return nil
	}
	var out []string
	for _, role := range []string{auth.RoleMember, auth.RoleAdmin} {
		listed := false
		for _, r := range tools {
			req := &Request{Principal: Principal{Role: role, Workspace: ws}, Action: ActionList, Resource: r,
				Endpoint: "aggregate", Protocol: "2025-11-25", Time: time.Now()}
			if e.Decide(req).Allowed {
				listed = true
				break
			}
		}
		if !listed {
			out = append(out, "under this document the "+role+" role can list no tool of this workspace (none of its "+
				strconv.Itoa(len(tools))+"): every "+role+"'s tools/list will be empty unless a group of theirs is permitted")
		}
	}
	return out
}

// apiRequest is the policy API's own decision for principal p in workspace ws.
func apiRequest(p auth.Principal, ws string) *Request {
	return &Request{Principal: Principal{Subject: p.Subject, Role: p.Role, Workspace: ws, Groups: p.Groups},
		Action: ActionCall, Resource: Resource{Type: TypeAPI, Name: APIPolicies, UpstreamName: APIPolicies, ReadOnly: false},
		Arguments: nil, Endpoint: "rest", Time: time.Now()}
}

// Put validates and saves text as workspace ws's document (global: the global one,
// superusers only) and republishes the catalog. Refused, with nothing stored: a document
// that does not parse or validate (VALIDATION_ERROR, details.problems with line and
// column); one under which the saver (for the global document: an admin of no group)
// could no longer call the policy API (Api::"policies"), which would lock every admin out
// (CONFLICT, details.decision); a saver the current policies already deny the policy API
// (FORBIDDEN, details.policyIds). Errors besides: NOT_FOUND, UNAVAILABLE.
func (s *Service) Put(ctx context.Context, p *auth.Principal, ws string, global bool, text string) (_ *View, err error) {
	defer derrors.Wrap(&err, "policies: put %s", ws)
	if global {
		if err := requireSuperuser(p); err != nil {
			return nil, err
		}
	}
	set, err := s.Check(ctx, p, ws, global, text)
	if err != nil {
		return nil, err
	}
	var key *string
	if !global {
		key = &ws
	}
	var row *db.AccessPolicy
	err = db.InTx(ctx, s.Pool, func(tx db.Tx) error {
		lock := "global"
		if key != nil {
			lock = ws
		}
		if err := db.LockKey(ctx, tx, "access_policies", lock); err != nil {
			return err
		}
		wsText, globalText, err := db.AccessPolicyTexts(ctx, tx, ws)
		if err != nil {
			return err
		}
		cur := &Engine{}
		cur.Global, _ = Parse(globalText)
		cur.Workspace, _ = Parse(wsText)
		next := &Engine{Global: cur.Global, Workspace: set}
		who := *p
		if global {
			next = &Engine{Global: set}
			who = auth.Principal{Subject: "", Role: auth.RoleAdmin}
		} else if d := cur.Decide(apiRequest(*p, ws)); !d.Allowed {
			return apperr.New(apperr.Forbidden, "the workspace's access policies deny you the policy API").
				WithDetails(map[string]any{"reason": "policy_denied", "policyIds": d.PolicyIDs, "decision": d.Reason})
		}
		if d := next.Decide(apiRequest(who, ws)); !d.Allowed {
			return apperr.New(apperr.Conflict, "this document would lock every admin out of the policy API").
				WithDetails(map[string]any{"reason": "lockout", "policyIds": d.PolicyIDs, "decision": d.Reason}).
				WithHint(`keep a permit for admins on Api::"policies", e.g. permit(principal in Role::"admin", action == Action::"call", resource == Api::"policies");`)
		}
		if row, err = db.AccessPolicyPut(ctx, tx, key, text, p.Subject); err != nil {
			return err
		}
		return db.EventInsert(ctx, tx, &db.Event{EntityType: "access_policy", EntityID: lock,
			Action: "access_policy.set", Actor: p.Subject, WorkspaceID: key,
			Payload: map[string]any{"policyIds": set.IDs()}})
	})
	if err != nil {
		return nil, err
	}
	v := viewOf(key, row)
	if v.Warnings, err = s.Warnings(ctx, ws, global, set); err != nil {
		// Saved: a warning that could not be computed is not a failed save.
		v.Warnings = nil
	}
	var workspaces []string
	if key != nil {
		workspaces = []string{ws}
	}
	v.CatalogPending = s.publish(ctx, workspaces)
	return v, nil
}

func (s *Service) publish(ctx context.Context, workspaces []string) (pending bool) {
	if s.Store == nil {
		return true
	}
	if err := catalog.Rebuild(ctx, s.Pool, s.Store, workspaces); err != nil {
		if s.Logger != nil {
			s.Logger.ErrorContext(ctx, "catalog rebuild failed after a policy change; the gateway keeps the previous policies until the next rebuild",
				"workspaces", workspaces, "err", err)
		}
		return true
	}
	if s.OnCatalogChange != nil {
		s.OnCatalogChange(workspaces)
	}
	return false
}

// WhatIf is one hypothetical request for the console's "what if" pad: a principal, an
// action, a tool (exposed name, or a built-in's name) and arguments; Text, when set, is
// the editor's unsaved workspace document (validated first), else the saved one.
type WhatIf struct {
	WorkspaceID string          `json:"workspaceId,omitempty" format:"uuid"`
	Text        *string         `json:"text,omitempty" doc:"An unsaved workspace document to decide with (validated first)."`
	Subject     string          `json:"subject"`
	Role        string          `json:"role" enum:"member,admin,superuser"`
	Groups      []string        `json:"groups,omitempty"`
	Action      string          `json:"action" enum:"list,call"`
	Tool        string          `json:"tool"`
	Arguments   json.RawMessage `json:"arguments,omitempty"`
	Chat        string          `json:"chat,omitempty"`
	// Time is an RFC 3339 instant (absent: now).
	Time *time.Time `json:"time,omitempty"`
}

// Decide answers a WhatIf: the decision and the policies that made it. Errors:
// VALIDATION_ERROR (an unknown role, action or tool; a document that does not validate),
// FORBIDDEN, NOT_FOUND, UNAVAILABLE.
func (s *Service) Decide(ctx context.Context, p *auth.Principal, in WhatIf) (_ *Decision, err error) {
	defer derrors.Wrap(&err, "policies: what-if %s", in.WorkspaceID)
	if err := checkWorkspace(p, in.WorkspaceID); err != nil {
		return nil, err
	}
	switch in.Role {
	case auth.RoleMember, auth.RoleAdmin, auth.RoleSuperuser:
	default:
		return nil, apperr.New(apperr.Validation, "role must be member, admin or superuser").WithDetails(map[string]string{"field": "role"})
	}
	if in.Action != ActionList && in.Action != ActionCall {
		return nil, apperr.New(apperr.Validation, `action must be "list" or "call"`).WithDetails(map[string]string{"field": "action"})
	}
	if len(in.Arguments) > 0 && in.Arguments[0] != '{' {
		return nil, apperr.New(apperr.Validation, "arguments must be a JSON object").WithDetails(map[string]string{"field": "arguments"})
	}
	doc, err := catalog.Build(ctx, s.Pool, in.WorkspaceID)
	if err != nil {
		return nil, err
	}
	e := &Engine{}
	if doc.Policies != nil {
		e.Global, _ = Parse(doc.Policies.Global)
		e.Workspace, _ = Parse(doc.Policies.Workspace)
	}
	if in.Text != nil {
		if e.Workspace, err = Check(*in.Text, SchemaFor(doc)); err != nil {
			return nil, invalid(err)
		}
	}
	res, ok := resourceIn(doc, in.Tool)
	if !ok {
		return nil, apperr.New(apperr.Validation, "tool %q is neither a tool of this workspace nor a built-in", in.Tool).
			WithDetails(map[string]string{"field": "tool"})
	}
	req := &Request{Principal: Principal{Subject: in.Subject, Role: in.Role, Workspace: in.WorkspaceID, Groups: in.Groups},
		Action: in.Action, Resource: res, Arguments: in.Arguments, Chat: in.Chat, Endpoint: "aggregate", Protocol: "2025-11-25"}
	if in.Time != nil {
		req.Time = *in.Time
	}
	d := e.Decide(req)
	return &d, nil
}

// resourceIn finds tool name in doc (exposed names) or among the built-ins (read-only and
// destructive unknown there: both false) or the policy API.
func resourceIn(doc *catalog.Document, name string) (Resource, bool) {
	for _, c := range doc.Connections {
		for _, t := range c.Tools {
			if t.ExposedName == name {
				return ToolResource(&c, &t), true
			}
		}
	}
	for _, b := range BuiltinNames {
		if b == name {
			return Resource{Type: TypeBuiltin, Name: name, UpstreamName: name}, true
		}
	}
	if name == APIPolicies {
		return Resource{Type: TypeAPI, Name: name, UpstreamName: name}, true
	}
	return Resource{}, false
}

// ToolResource is proxied tool t of connection c as a policy resource: its exposed and
// upstream names, the connection's handle, and its annotations read as MCP defines them
// (destructiveHint defaults to true for a tool that is not read-only).
func ToolResource(c *catalog.Connection, t *catalog.Tool) Resource {
	var a struct {
		ReadOnly    bool  `json:"readOnlyHint"`
		Destructive *bool `json:"destructiveHint"`
	}
	_ = json.Unmarshal(t.Annotations, &a)
	return Resource{Type: TypeTool, Name: t.ExposedName, UpstreamName: t.UpstreamName, Connection: c.Handle,
		ReadOnly: a.ReadOnly, Destructive: !a.ReadOnly && (a.Destructive == nil || *a.Destructive)}
}

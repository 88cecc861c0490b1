// Package policy is the gateway's call-time access policy engine (docs/POLICIES.md): Cedar
// policies, parsed and evaluated by the Cedar team's Go implementation
// (github.com/cedar-policy/cedar-go), over the entity model below. One Set is one policy
// document (a workspace's or the global one); an Engine holds both and decides a Request.
//
// Entity model (no namespace):
//
//	principal  User::"<subject>"  attrs subject, role, workspace (String), groups (Set<String>);
//	           member of Role::"<role>" and of Group::"<g>" for each identity-provider group
//	action     Action::"list" (tools/list shows the tool) | Action::"call" (every way to call it)
//	resource   Tool::"<exposed name>" in Connection::"<handle>"   (a proxied tool)
//	           Builtin::"<name>"                                  (an agentpack_* built-in)
//	           Api::"policies"                                     (the policy API itself)
//	           every resource has name, upstreamName, connection (String), builtin,
//	           readOnly, destructive (Bool)
//	context    arguments (Record: the call's arguments; {} for list), chat (String, "" when
//	           none), protocol (String: the request's protocol revision), endpoint
//	           ("aggregate" | "single"), time {hour, minute, weekday (0 = Sunday), unix} (UTC)
//
// Evaluation: the global document first, then the workspace's. A document with no policy has
// no say; one with policies decides as Cedar does (deny unless a permit applies; any forbid
// that applies wins). A request is allowed only when neither document denies it.
package policy

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	cedar "github.com/cedar-policy/cedar-go"
	"github.com/cedar-policy/cedar-go/types"
)

// The entity types and actions of the model (see the package comment).
const (
	TypeUser       = "User"
	TypeRole       = "Role"
	TypeGroup      = "Group"
	TypeTool       = "Tool"
	TypeBuiltin    = "Builtin"
	TypeConnection = "Connection"
	TypeAPI        = "Api"
	TypeAction     = "Action"

	ActionList = "list"
	ActionCall = "call"

	// APIPolicies is the Api resource of the policy API (REST /api/policies): a document
	// that denies every admin "call" on it is refused (the lock-out rule).
	APIPolicies = "policies"
)

// Problem is one reason a document was refused: where (1-based line and column of the
// document's text; the policy's start when no finer place is known), which policy (its
// @id, or "policy<N>"), and what.
type Problem struct {
	Line     int    `json:"line"`
	Column   int    `json:"column"`
	PolicyID string `json:"policyId,omitempty"`
	Message  string `json:"message"`
}

// InvalidError is a document that does not parse or does not validate: its problems, in
// text order.
type InvalidError struct{ Problems []Problem }

func (e *InvalidError) Error() string {
	if len(e.Problems) == 0 {
		return "policy: invalid document"
	}
	p := e.Problems[0]
	return fmt.Sprintf("policy: line %d, column %d: %s", p.Line, p.Column, p.Message)
}

// Set is one parsed policy document: its policies in text order, keyed by id.
type Set struct {
	text string
	ps   *cedar.PolicySet
	ids  []cedar.PolicyID
	// scopes are the policies' scopes in text order, for the pre-filter (scope.go).
	scopes []scoped
}

// Len is the number of policies in s.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	return len(s.ids)
}

// IDs are s's policy ids in text order.
func (s *Set) IDs() []string {
	out := make([]string, 0, s.Len())
	if s != nil {
		for _, id := range s.ids {
			out = append(out, string(id))
		}
	}
	return out
}

var parseErrRE = regexp.MustCompile(`at [^:]*:(\d+):(\d+) (.*)$`)

// Parse parses a Cedar policy document. A policy's id is its @id("…") annotation, else
// "policy<N>" (N its 0-based place in the text); ids must be unique. Errors: *InvalidError
// with the line and column the Cedar parser stopped at.
func Parse(text string) (*Set, error) {
	list, err := cedar.NewPolicyListFromBytes("", []byte(text))
	if err != nil {
		p := Problem{Line: 1, Column: 1, Message: err.Error()}
		if m := parseErrRE.FindStringSubmatch(err.Error()); m != nil {
			p.Line, _ = strconv.Atoi(m[1])
			p.Column, _ = strconv.Atoi(m[2])
			p.Message = "syntax error: " + m[3]
		}
		return nil, &InvalidError{Problems: []Problem{p}}
	}
	s := &Set{text: text, ps: cedar.NewPolicySet()}
	var problems []Problem
	for i, p := range list {
		id := cedar.PolicyID("policy" + strconv.Itoa(i))
		if v, ok := p.Annotations()["id"]; ok {
			id = cedar.PolicyID(v)
		}
		if !s.ps.Add(id, p) {
			pos := p.Position()
			problems = append(problems, Problem{Line: pos.Line, Column: pos.Column, PolicyID: string(id),
				Message: "duplicate policy id " + strconv.Quote(string(id))})
			continue
		}
		s.ids = append(s.ids, id)
		s.scopes = append(s.scopes, scopeOf(id, p))
	}
	if problems != nil {
		return nil, &InvalidError{Problems: problems}
	}
	return s, nil
}

// Principal is the caller as policies see it.
type Principal struct {
	Subject   string
	Role      string
	Workspace string
	Groups    []string
}

// Resource is what is listed or called.
type Resource struct {
	// Type is TypeTool, TypeBuiltin or TypeAPI.
	Type string
	// Name is the exposed name (a proxied tool's mcp_<handle>_<tool> or its override's
	// name; a built-in's name; "policies" for the API).
	Name         string
	UpstreamName string
	Connection   string // the connection's handle; "" for built-ins and the API
	ReadOnly     bool
	Destructive  bool
}

// Request is one decision's input.
type Request struct {
	Principal Principal
	Action    string // ActionList or ActionCall
	Resource  Resource
	// Arguments are the call's arguments as sent (a JSON object; nil = {}).
	Arguments json.RawMessage
	Chat      string
	Protocol  string
	Endpoint  string // "aggregate" or "single"
	Time      time.Time
}

// Decision is a decision and why: Allowed, and when denied the ids of the forbid policies
// that applied (PolicyIDs, prefixed "global/" for the global document) or, with none,
// Reason "no_permit" (the document that denied has no permit for the request).
type Decision struct {
	Allowed   bool     `json:"allowed"`
	PolicyIDs []string `json:"policyIds,omitempty" doc:"The forbid policies that denied, or the permits that allowed (global ones prefixed global/)."`
	Reason    string   `json:"reason,omitempty" enum:"forbid,no_permit,permit,no_policies"` // "forbid" | "no_permit" when denied; "permit" | "no_policies" when allowed
	// Document is the document that decided: "global" or "workspace" ("" with no policies).
	Document string `json:"document,omitempty" enum:"global,workspace"`
}

// Engine is the two documents in force for a workspace (either may be nil).
type Engine struct {
	Global    *Set
	Workspace *Set
}

// Empty reports whether e has no policy at all (every request is allowed without
// evaluating anything).
func (e *Engine) Empty() bool { return e == nil || (e.Global.Len() == 0 && e.Workspace.Len() == 0) }

// Decide evaluates req: the global document, then the workspace's (see the package
// comment). It does no I/O.
func (e *Engine) Decide(req *Request) Decision {
	if e.Empty() {
		return Decision{Allowed: true, Reason: "no_policies"}
	}
	entities, creq := req.cedar()
	last := Decision{Allowed: true, Reason: "no_policies"}
	for _, doc := range []struct {
		name, prefix string
		set          *Set
	}{{"global", "global/", e.Global}, {"workspace", "", e.Workspace}} {
		if doc.set.Len() == 0 {
			continue
		}
		// Only the policies whose scope can match are evaluated (scope.go); Cedar checks the
		// scopes again, so the answer is what the whole set answers.
		ok, diag := cedar.Authorize(doc.set.candidates(req), entities, creq)
		d := Decision{Allowed: ok == cedar.Allow, Document: doc.name}
		for _, r := range diag.Reasons {
			d.PolicyIDs = append(d.PolicyIDs, doc.prefix+string(r.PolicyID))
		}
		switch {
		case !d.Allowed && len(d.PolicyIDs) > 0:
			d.Reason = "forbid"
		case !d.Allowed:
			d.Reason = "no_permit"
		default:
			d.Reason = "permit"
		}
		if !d.Allowed {
			return d
		}
		last = d
	}
	return last
}

// Entity UIDs and attribute names, allocated once.
var (
	actionList = types.NewEntityUID(TypeAction, ActionList)
	actionCall = types.NewEntityUID(TypeAction, ActionCall)
)

// cedar makes req's entities and Cedar request.
func (req *Request) cedar() (types.EntityMap, cedar.Request) {
	p := req.Principal
	puid := types.NewEntityUID(TypeUser, types.String(p.Subject))
	parents := make([]types.EntityUID, 0, 1+len(p.Groups))
	parents = append(parents, types.NewEntityUID(TypeRole, types.String(p.Role)))
	groups := make([]types.Value, 0, len(p.Groups))
	for _, g := range p.Groups {
		parents = append(parents, types.NewEntityUID(TypeGroup, types.String(g)))
		groups = append(groups, types.String(g))
	}
	r := req.Resource
	rtype := r.Type
	if rtype == "" {
		rtype = TypeTool
	}
	ruid := types.NewEntityUID(types.EntityType(rtype), types.String(r.Name))
	var rparents []types.EntityUID
	if rtype == TypeTool && r.Connection != "" {
		rparents = append(rparents, types.NewEntityUID(TypeConnection, types.String(r.Connection)))
	}
	upstream := r.UpstreamName
	if upstream == "" {
		upstream = r.Name
	}
	entities := types.EntityMap{
		puid: {UID: puid, Parents: types.NewEntityUIDSet(parents...), Attributes: types.NewRecord(types.RecordMap{
			"subject": types.String(p.Subject), "role": types.String(p.Role), "workspace": types.String(p.Workspace),
			"groups": types.NewSet(groups...),
		})},
		ruid: {UID: ruid, Parents: types.NewEntityUIDSet(rparents...), Attributes: types.NewRecord(types.RecordMap{
			"name": types.String(r.Name), "upstreamName": types.String(upstream), "connection": types.String(r.Connection),
			"builtin": types.Boolean(rtype == TypeBuiltin), "readOnly": types.Boolean(r.ReadOnly),
			"destructive": types.Boolean(r.Destructive),
		})},
	}
	action := actionCall
	if req.Action == ActionList {
		action = actionList
	}
	t := req.Time
	if t.IsZero() {
		t = time.Now()
	}
	t = t.UTC()
	ctx := types.NewRecord(types.RecordMap{
		"arguments": argumentsValue(req.Arguments),
		"chat":      types.String(req.Chat),
		"protocol":  types.String(req.Protocol),
		"endpoint":  types.String(req.Endpoint),
		"time": types.NewRecord(types.RecordMap{
			"hour": types.Long(t.Hour()), "minute": types.Long(t.Minute()), "weekday": types.Long(t.Weekday()),
			"unix": types.Long(t.Unix()),
		}),
	})
	return entities, cedar.Request{Principal: puid, Action: action, Resource: ruid, Context: ctx}
}

// maxArgDepth bounds how deep a call's arguments are converted for policies (deeper values
// become their JSON text).
const maxArgDepth = 8

var emptyRecord = types.NewRecord(nil)

// argumentsValue converts a call's arguments (a JSON object) into a Cedar record: strings,
// booleans, integers (Long), other numbers (their decimal text, as String: Cedar has no
// floating point), arrays (Set), objects (Record); null members are left out, so `has`
// treats them as absent.
func argumentsValue(raw json.RawMessage) types.Value {
	if len(raw) == 0 {
		return emptyRecord
	}
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	if dec.Decode(&m) != nil || m == nil {
		return emptyRecord
	}
	v, ok := cedarValue(m, 0)
	if !ok {
		return emptyRecord
	}
	return v
}

func cedarValue(v any, depth int) (types.Value, bool) {
	switch x := v.(type) {
	case string:
		return types.String(x), true
	case bool:
		return types.Boolean(x), true
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return types.Long(i), true
		}
		if f, err := x.Float64(); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return types.Long(int64(f)), true
		}
		return types.String(x.String()), true
	case []any:
		if depth >= maxArgDepth {
			b, _ := json.Marshal(x)
			return types.String(b), true
		}
		vals := make([]types.Value, 0, len(x))
		for _, e := range x {
			if cv, ok := cedarValue(e, depth+1); ok {
				vals = append(vals, cv)
			}
		}
		return types.NewSet(vals...), true
	case map[string]any:
		if depth >= maxArgDepth {
			b, _ := json.Marshal(x)
			return types.String(b), true
		}
		rm := make(types.RecordMap, len(x))
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if cv, ok := cedarValue(x[k], depth+1); ok {
				rm[types.String(k)] = cv
			}
		}
		return types.NewRecord(rm), true
	}
	return nil, false // null
}

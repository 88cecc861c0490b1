package policy

import (
	"encoding/json"
	"slices"
	"sort"
	"strconv"
	"strings"

	cedar "github.com/cedar-policy/cedar-go"
	"github.com/cedar-policy/cedar-go/types"
	"github.com/cedar-policy/cedar-go/x/exp/ast"

	"github.com/agentpack/gateway/shared/catalog"
)

// BuiltinNames are the gateway's built-in tools (agentpack_*), the ids a Builtin::"…" may
// name. The gateway's tests hold this list to the built-ins it registers.
var BuiltinNames = []string{
	"agentpack_audit_list", "agentpack_catalog_get", "agentpack_catalog_install", "agentpack_catalog_list",
	"agentpack_catalog_uninstall", "agentpack_connection_test", "agentpack_connection_toggle",
	"agentpack_connections_list", "agentpack_pin_add", "agentpack_pin_remove", "agentpack_pins_list",
	"agentpack_ratelimit_delete", "agentpack_ratelimit_set", "agentpack_ratelimits_list",
	"agentpack_registry_import", "agentpack_tool_call", "agentpack_tool_override_delete",
	"agentpack_tool_override_set", "agentpack_tool_overrides_list", "agentpack_toolsets_list",
	"agentpack_tools_search",
}

// Schema is what a workspace document is validated against: the names its policies may use.
// It is generated from the workspace's catalog document (SchemaFor), so a typo in a tool,
// connection or argument name is an error when saving, not a policy that never applies.
type Schema struct {
	// Tools are the proxied tools by exposed name; each holds its argument names (the
	// input schema's properties) and its upstream name and connection handle.
	Tools map[string]ToolSchema
	// Connections are the handles of the workspace's connections.
	Connections map[string]bool
	// Names off: the global document, which applies to every workspace, is checked for the
	// model's types and attributes only.
	NamesUnchecked bool
}

// ToolSchema is one proxied tool in a Schema.
type ToolSchema struct {
	UpstreamName string
	Connection   string
	Args         map[string]bool
}

// SchemaFor is the schema of workspace document doc: every tool of every connection (the
// exposed names, after overrides), with its arguments.
func SchemaFor(doc *catalog.Document) *Schema {
	s := &Schema{Tools: map[string]ToolSchema{}, Connections: map[string]bool{}}
	if doc == nil {
		return s
	}
	for _, c := range doc.Connections {
		s.Connections[c.Handle] = true
		for _, t := range c.Tools {
			var in struct {
				Properties map[string]json.RawMessage `json:"properties"`
			}
			_ = json.Unmarshal(t.InputSchema, &in)
			args := make(map[string]bool, len(in.Properties))
			for k := range in.Properties {
				args[k] = true
			}
			s.Tools[t.ExposedName] = ToolSchema{UpstreamName: t.UpstreamName, Connection: c.Handle, Args: args}
		}
	}
	return s
}

// GlobalSchema is the schema of the global document: types and attributes only.
func GlobalSchema() *Schema { return &Schema{NamesUnchecked: true} }

// The model's attributes (package comment).
var (
	principalAttrs = []string{"subject", "role", "workspace", "groups"}
	resourceAttrs  = []string{"name", "upstreamName", "connection", "builtin", "readOnly", "destructive"}
	contextAttrs   = []string{"arguments", "chat", "protocol", "endpoint", "time"}
	timeAttrs      = []string{"hour", "minute", "weekday", "unix"}
	roles          = []string{"member", "admin", "superuser"}
)

// Validate checks every policy of s against sch and returns the problems (nil: valid):
// entity types outside the model, actions other than list and call, roles other than
// member/admin/superuser, unknown attributes of principal, resource, context and
// context.time, and — unless sch.NamesUnchecked — Tool, Builtin and Connection ids, names
// compared with resource.name / upstreamName / connection, and context.arguments members
// that no tool the policy can apply to takes. Each problem points at its place in the text.
func Validate(s *Set, sch *Schema) []Problem {
	var out []Problem
	var offsets []int
	for _, id := range s.ids {
		offsets = append(offsets, s.ps.Get(id).AST().Position.Offset)
	}
	for i, id := range s.ids {
		end := len(s.text)
		if i+1 < len(offsets) {
			end = offsets[i+1]
		}
		v := &validator{sch: sch, text: s.text, start: offsets[i], end: end, id: string(id)}
		v.policy(s.ps.Get(id))
		out = append(out, v.problems...)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Line != out[j].Line {
			return out[i].Line < out[j].Line
		}
		return out[i].Column < out[j].Column
	})
	return out
}

type validator struct {
	sch        *Schema
	text       string
	start, end int // the policy's bytes in text
	id         string
	problems   []Problem
	// args are the argument names of the tools the policy's resource scope admits (nil:
	// any tool's; skip: a built-in or the API, whose arguments are not checked).
	args     map[string]bool
	skipArgs bool
}

// fail records msg at the first occurrence of needle in the policy's text (its start when
// absent).
func (v *validator) fail(needle, msg string) {
	off := v.start
	if needle != "" {
		if i := strings.Index(v.text[v.start:v.end], needle); i >= 0 {
			off = v.start + i
		}
	}
	line := 1 + strings.Count(v.text[:off], "\n")
	col := off - (strings.LastIndex(v.text[:off], "\n") + 1) + 1
	v.problems = append(v.problems, Problem{Line: line, Column: col, PolicyID: v.id, Message: msg})
}

func (v *validator) policy(p *cedar.Policy) {
	a := (*ast.Policy)(p.AST())
	switch sc := a.Principal.(type) {
	case ast.ScopeTypeEq:
		v.entity(sc.Entity, TypeUser)
	case ast.ScopeTypeIn:
		v.entity(sc.Entity, TypeRole, TypeGroup, TypeUser)
	case ast.ScopeTypeIs:
		v.entityType(sc.Type, TypeUser)
	case ast.ScopeTypeIsIn:
		v.entityType(sc.Type, TypeUser)
		v.entity(sc.Entity, TypeRole, TypeGroup, TypeUser)
	}
	switch sc := a.Action.(type) {
	case ast.ScopeTypeEq:
		v.entity(sc.Entity, TypeAction)
	case ast.ScopeTypeIn:
		v.entity(sc.Entity, TypeAction)
	case ast.ScopeTypeInSet:
		for _, e := range sc.Entities {
			v.entity(e, TypeAction)
		}
	}
	resTypes := []string{TypeTool, TypeBuiltin, TypeAPI}
	switch sc := a.Resource.(type) {
	case ast.ScopeTypeEq:
		v.entity(sc.Entity, resTypes...)
		v.scopeArgs(sc.Entity)
	case ast.ScopeTypeIn:
		v.entity(sc.Entity, append(resTypes, TypeConnection)...)
		v.scopeArgs(sc.Entity)
	case ast.ScopeTypeIs:
		v.entityType(sc.Type, resTypes...)
		v.skipArgs = sc.Type != TypeTool
	case ast.ScopeTypeIsIn:
		v.entityType(sc.Type, resTypes...)
		v.entity(sc.Entity, append(resTypes, TypeConnection)...)
		v.scopeArgs(sc.Entity)
		v.skipArgs = v.skipArgs || sc.Type != TypeTool
	}
	for _, c := range a.Conditions {
		ast.Inspect(ast.NewNode(c.Body), func(n ast.IsNode) bool {
			v.node(n)
			return true
		})
	}
}

// scopeArgs narrows the argument names checked to the tools the resource scope names.
func (v *validator) scopeArgs(uid types.EntityUID) {
	switch string(uid.Type) {
	case TypeTool:
		if t, ok := v.sch.Tools[string(uid.ID)]; ok {
			v.args = t.Args
		}
	case TypeConnection:
		v.args = map[string]bool{}
		for _, t := range v.sch.Tools {
			if t.Connection == string(uid.ID) {
				for k := range t.Args {
					v.args[k] = true
				}
			}
		}
	default:
		v.skipArgs = true
	}
}

func (v *validator) entityType(t types.EntityType, allowed ...string) bool {
	if !slices.Contains(allowed, string(t)) {
		v.fail(string(t), "unknown entity type "+strconv.Quote(string(t))+" here (expected "+strings.Join(allowed, ", ")+")")
		return false
	}
	return true
}

func (v *validator) entity(uid types.EntityUID, allowed ...string) {
	if !v.entityType(uid.Type, allowed...) {
		return
	}
	id := string(uid.ID)
	needle := strconv.Quote(id)
	switch string(uid.Type) {
	case TypeAction:
		if id != ActionList && id != ActionCall {
			v.fail(needle, "unknown action "+needle+" (the actions are \"list\" and \"call\")")
		}
	case TypeRole:
		if !slices.Contains(roles, id) {
			v.fail(needle, "unknown role "+needle+" (member, admin or superuser)")
		}
	case TypeAPI:
		if id != APIPolicies {
			v.fail(needle, "unknown Api "+needle+" (the only one is \"policies\")")
		}
	case TypeBuiltin:
		if !slices.Contains(BuiltinNames, id) {
			v.fail(needle, "unknown built-in tool "+needle)
		}
	case TypeTool:
		if _, ok := v.sch.Tools[id]; !ok && !v.sch.NamesUnchecked {
			v.fail(needle, "unknown tool "+needle+" in this workspace"+v.suggest(id))
		}
	case TypeConnection:
		if !v.sch.Connections[id] && !v.sch.NamesUnchecked {
			v.fail(needle, "unknown connection handle "+needle+" in this workspace")
		}
	}
}

// suggest names a tool whose upstream name is id (a policy must use the exposed name).
func (v *validator) suggest(id string) string {
	for name, t := range v.sch.Tools {
		if t.UpstreamName == id {
			return " (its exposed name is " + strconv.Quote(name) + ")"
		}
	}
	return ""
}

// variable returns the name of n when it is a variable (principal, action, resource,
// context).
func variable(n ast.IsNode) string {
	if x, ok := n.(ast.NodeTypeVariable); ok {
		return string(x.Name)
	}
	return ""
}

// contextMember returns the member of context that n accesses (context.arguments →
// "arguments").
func contextMember(n ast.IsNode) string {
	if x, ok := n.(ast.NodeTypeAccess); ok && variable(x.Arg) == "context" {
		return string(x.Value)
	}
	return ""
}

func (v *validator) attr(on ast.IsNode, name string, how string) {
	needle := name
	switch variable(on) {
	case "principal":
		if !slices.Contains(principalAttrs, name) {
			v.fail(needle, "unknown principal attribute "+strconv.Quote(name)+" (subject, role, workspace, groups)")
		}
	case "resource":
		if !slices.Contains(resourceAttrs, name) {
			v.fail(needle, "unknown resource attribute "+strconv.Quote(name)+" (name, upstreamName, connection, builtin, readOnly, destructive)")
		}
	case "context":
		if !slices.Contains(contextAttrs, name) {
			v.fail(needle, "unknown context attribute "+strconv.Quote(name)+" (arguments, chat, protocol, endpoint, time)")
		}
	}
	switch contextMember(on) {
	case "time":
		if !slices.Contains(timeAttrs, name) {
			v.fail(needle, "unknown context.time attribute "+strconv.Quote(name)+" (hour, minute, weekday, unix)")
		}
	case "arguments":
		v.argument(name, how)
	}
}

// argument checks an argument name against the tools the policy can apply to.
func (v *validator) argument(name, how string) {
	if v.skipArgs || v.sch.NamesUnchecked {
		return
	}
	if v.args != nil {
		if !v.args[name] {
			v.fail(name, "unknown argument "+strconv.Quote(name)+" ("+how+"): no tool this policy applies to takes it")
		}
		return
	}
	for _, t := range v.sch.Tools {
		if t.Args[name] {
			return
		}
	}
	v.fail(name, "unknown argument "+strconv.Quote(name)+" ("+how+"): no tool of this workspace takes it")
}

func (v *validator) node(n ast.IsNode) {
	switch x := n.(type) {
	case ast.NodeValue:
		v.value(x.Value)
	case ast.NodeTypeAccess:
		v.attr(x.Arg, string(x.Value), "read")
	case ast.NodeTypeHas:
		v.attr(x.Arg, string(x.Value), "has")
	case ast.NodeTypeIs:
		v.entityType(x.EntityType, TypeUser, TypeRole, TypeGroup, TypeTool, TypeBuiltin, TypeConnection, TypeAPI, TypeAction)
	case ast.NodeTypeIsIn:
		v.entityType(x.EntityType, TypeUser, TypeRole, TypeGroup, TypeTool, TypeBuiltin, TypeConnection, TypeAPI, TypeAction)
	case ast.NodeTypeEquals:
		v.compared(x.Left, x.Right)
	case ast.NodeTypeNotEquals:
		v.compared(x.Left, x.Right)
	}
}

// value checks entity references in a literal (sets and records included).
func (v *validator) value(val types.Value) {
	switch x := val.(type) {
	case types.EntityUID:
		v.entity(x, TypeUser, TypeRole, TypeGroup, TypeTool, TypeBuiltin, TypeConnection, TypeAPI, TypeAction)
	case types.Set:
		for e := range x.All() {
			v.value(e)
		}
	case types.Record:
		for _, e := range x.All() {
			v.value(e)
		}
	}
}

// compared checks a string compared with resource.name, upstreamName or connection.
func (v *validator) compared(l, r ast.IsNode) {
	if v.sch.NamesUnchecked {
		return
	}
	for _, pair := range [][2]ast.IsNode{{l, r}, {r, l}} {
		acc, ok := pair[0].(ast.NodeTypeAccess)
		if !ok || variable(acc.Arg) != "resource" {
			continue
		}
		lit, ok := pair[1].(ast.NodeValue)
		if !ok {
			continue
		}
		s, ok := lit.Value.(types.String)
		if !ok {
			continue
		}
		name, needle := string(s), strconv.Quote(string(s))
		switch acc.Value {
		case "name":
			if _, ok := v.sch.Tools[name]; !ok && !slices.Contains(BuiltinNames, name) {
				v.fail(needle, "unknown tool "+needle+" compared with resource.name"+v.suggest(name))
			}
		case "upstreamName":
			found := slices.Contains(BuiltinNames, name)
			for _, t := range v.sch.Tools {
				found = found || t.UpstreamName == name
			}
			if !found {
				v.fail(needle, "no tool of this workspace has the upstream name "+needle)
			}
		case "connection":
			if !v.sch.Connections[name] {
				v.fail(needle, "unknown connection handle "+needle+" compared with resource.connection")
			}
		}
	}
}

// Check parses text and validates it against sch: the Set, or an *InvalidError with every
// problem (line and column in text).
func Check(text string, sch *Schema) (*Set, error) {
	s, err := Parse(text)
	if err != nil {
		return nil, err
	}
	if p := Validate(s, sch); len(p) > 0 {
		return nil, &InvalidError{Problems: p}
	}
	return s, nil
}

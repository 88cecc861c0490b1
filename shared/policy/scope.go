package policy

import (
	"iter"
	"slices"

	cedar "github.com/cedar-policy/cedar-go"
	"github.com/cedar-policy/cedar-go/types"
	"github.com/cedar-policy/cedar-go/x/exp/ast"
)

// The pre-filter: a policy whose principal, action or resource scope cannot match a
// request cannot apply to it, so Decide hands Cedar only the others. Cedar evaluates the
// scopes again; the filter only spares it the policies that are sure not to apply (with
// 50 policies most of them name another tool, role, group or action).

// scoped is one policy with its scopes read once.
type scoped struct {
	id     cedar.PolicyID
	p      *cedar.Policy
	prin   ast.IsPrincipalScopeNode
	action ast.IsActionScopeNode
	res    ast.IsResourceScopeNode
}

func scopeOf(id cedar.PolicyID, p *cedar.Policy) scoped {
	a := (*ast.Policy)(p.AST())
	return scoped{id: id, p: p, prin: a.Principal, action: a.Action, res: a.Resource}
}

// candidates is the policies of s whose scopes may match req.
func (s *Set) candidates(req *Request) policyList {
	out := make(policyList, 0, len(s.scopes))
	for i := range s.scopes {
		if sc := &s.scopes[i]; sc.mayMatch(req) {
			out = append(out, sc)
		}
	}
	return out
}

// policyList is a cedar.PolicyIterator over some of a Set's policies.
type policyList []*scoped

func (l policyList) All() iter.Seq2[cedar.PolicyID, *cedar.Policy] {
	return func(yield func(cedar.PolicyID, *cedar.Policy) bool) {
		for _, sc := range l {
			if !yield(sc.id, sc.p) {
				return
			}
		}
	}
}

// mayMatch is false only when a scope of sc certainly excludes req.
func (sc *scoped) mayMatch(req *Request) bool {
	return principalMay(sc.prin, &req.Principal) && actionMay(sc.action, req.Action) && resourceMay(sc.res, &req.Resource)
}

// principalIn reports whether the principal is uid or a member of it (its role, its groups).
func principalIn(p *Principal, uid types.EntityUID) bool {
	id := string(uid.ID)
	switch string(uid.Type) {
	case TypeUser:
		return id == p.Subject
	case TypeRole:
		return id == p.Role
	case TypeGroup:
		return slices.Contains(p.Groups, id)
	}
	return false
}

func principalMay(n ast.IsPrincipalScopeNode, p *Principal) bool {
	switch sc := n.(type) {
	case ast.ScopeTypeEq:
		return sc.Entity.Type == TypeUser && string(sc.Entity.ID) == p.Subject
	case ast.ScopeTypeIn:
		return principalIn(p, sc.Entity)
	case ast.ScopeTypeIs:
		return sc.Type == TypeUser
	case ast.ScopeTypeIsIn:
		return sc.Type == TypeUser && principalIn(p, sc.Entity)
	}
	return true
}

func actionMay(n ast.IsActionScopeNode, action string) bool {
	is := func(uid types.EntityUID) bool { return uid.Type == TypeAction && string(uid.ID) == action }
	switch sc := n.(type) {
	case ast.ScopeTypeEq:
		return is(sc.Entity)
	case ast.ScopeTypeIn:
		return is(sc.Entity)
	case ast.ScopeTypeInSet:
		return slices.ContainsFunc(sc.Entities, is)
	}
	return true
}

// resourceWithin reports whether the resource is uid or in it (a tool in its connection).
func resourceWithin(r *Resource, uid types.EntityUID) bool {
	id := string(uid.ID)
	if string(uid.Type) == TypeConnection {
		return resourceType(r) == TypeTool && r.Connection == id
	}
	return string(uid.Type) == resourceType(r) && id == r.Name
}

func resourceType(r *Resource) string {
	if r.Type == "" {
		return TypeTool
	}
	return r.Type
}

func resourceMay(n ast.IsResourceScopeNode, r *Resource) bool {
	switch sc := n.(type) {
	case ast.ScopeTypeEq:
		return string(sc.Entity.Type) == resourceType(r) && string(sc.Entity.ID) == r.Name
	case ast.ScopeTypeIn:
		return resourceWithin(r, sc.Entity)
	case ast.ScopeTypeIs:
		return string(sc.Type) == resourceType(r)
	case ast.ScopeTypeIsIn:
		return string(sc.Type) == resourceType(r) && resourceWithin(r, sc.Entity)
	}
	return true
}

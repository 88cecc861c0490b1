package builtin

import (
	"slices"
	"testing"

	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/policy"
)

// TestPolicyBuiltinNames: the names access policies may give a Builtin::"…" are exactly the
// built-ins registered (policy.BuiltinNames is checked at save time, where the gateway's
// definitions are not at hand).
func TestPolicyBuiltinNames(t *testing.T) {
	t.Parallel()
	var names []string
	for _, b := range testSet(t).All() {
		names = append(names, b.Name)
	}
	slices.Sort(names)
	want := slices.Sorted(slices.Values(policy.BuiltinNames))
	if !slices.Equal(names, want) {
		t.Errorf("registered %v\npolicy.BuiltinNames %v", names, want)
	}
}

// TestSuperuserOnlyVisibility: a superuser-only built-in is listed to superusers only and
// its call is FORBIDDEN to an admin; the role class keeps the three apart.
func TestSuperuserOnlyVisibility(t *testing.T) {
	t.Parallel()
	b := testSet(t).Lookup("agentpack_registry_import")
	admin := &auth.Principal{Subject: "a", Role: auth.RoleAdmin, Workspaces: []string{"ws"}}
	super := &auth.Principal{Subject: "s", Role: auth.RoleSuperuser}
	if CanSee(admin, b, nil) || !CanSee(super, b, nil) {
		t.Errorf("visibility: admin %v, superuser %v", CanSee(admin, b, nil), CanSee(super, b, nil))
	}
	if err := checkToolAccess(admin, b, "ws"); err == nil {
		t.Errorf("an admin may call it")
	}
	if err := checkToolAccess(super, b, "ws"); err != nil {
		t.Errorf("superuser: %v", err)
	}
	if RoleClass(admin) == RoleClass(super) {
		t.Errorf("admin and superuser share a role class")
	}
}

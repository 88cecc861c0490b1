package builtin

import (
	"slices"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
)

// CanSee reports whether principal p sees built-in b in tools/list, given the toolsets
// the request selected (nil = all). Admin-only tools are listed to admins only,
// superuser-only (platform) tools to superusers only: a tool is listed only to those who
// may call it.
func CanSee(p *auth.Principal, b *Compiled, toolsets []string) bool {
	if b.AdminOnly && !p.IsAdmin() {
		return false
	}
	if b.SuperuserOnly && !p.IsSuperuser() {
		return false
	}
	return len(toolsets) == 0 || slices.Contains(toolsets, b.Toolset) || b.Toolset == toolsetMeta
}

// checkToolAccess is the access check of a call: nil when p may call b in
// workspace ws, else a FORBIDDEN error. It runs before any argument parsing.
func checkToolAccess(p *auth.Principal, b *Compiled, ws string) error {
	if !p.InWorkspace(ws) {
		return apperr.New(apperr.Forbidden, "not a member of this workspace")
	}
	if b.AdminOnly && !p.IsAdmin() {
		return apperr.New(apperr.Forbidden, "%s requires the admin role", b.Name).
			WithHint("ask a workspace admin to run it")
	}
	if b.SuperuserOnly && !p.IsSuperuser() {
		return apperr.New(apperr.Forbidden, "%s requires the superuser role", b.Name).
			WithHint("it changes what every workspace shares; ask a platform superuser to run it")
	}
	return nil
}

// RoleClass is the part of a principal that decides which built-ins are visible: the
// server cache key uses it, never the principal itself.
func RoleClass(p *auth.Principal) string {
	if p.IsSuperuser() {
		return "superuser"
	}
	if p.IsAdmin() {
		return "admin"
	}
	return "member"
}

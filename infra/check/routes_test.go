package check

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/agentpack/gateway/functions/marketplace/api"
	"github.com/agentpack/gateway/functions/marketplace/authserver"
	"github.com/agentpack/gateway/functions/marketplace/console"
	"github.com/agentpack/gateway/shared/identity"
)

// servedRequests are requests the functions' handlers serve (their own route tables, the
// ones cmd/local/stack mounts for `make run`), each with the function that must receive it
// in AWS. A request not routed by the API there is a 404 from API Gateway that no local
// test can see.
func servedRequests() map[string]string {
	out := map[string]string{}
	concrete := regexp.MustCompile(`\{[^}]*\}`)
	add := func(fn, method, path string) { out[method+" "+concrete.ReplaceAllString(path, "x")] = fn }
	for _, r := range api.Routes {
		m, p, _ := strings.Cut(r.Pattern, " ")
		add("MarketplaceFunction", m, p)
	}
	for _, p := range []string{api.OpenAPIPath, api.OAuthCallbackPath, api.ClientMetadataPath, console.Prefix, console.Prefix + "/x",
		identity.SignInPath, identity.CallbackPath, identity.SignOutPath, identity.SessionPath, identity.NoMembershipPath,
		authserver.MetadataPath, authserver.MetadataPath + "/mcp", authserver.JWKSPath, authserver.AuthorizePath} {
		add("MarketplaceFunction", http.MethodGet, p)
	}
	for _, p := range []string{identity.SignOutPath, authserver.AuthorizePath, authserver.TokenPath, authserver.RegisterPath, authserver.RevokePath} {
		add("MarketplaceFunction", http.MethodPost, p)
	}
	// Browser clients' preflights, answered by the authorization server.
	for _, p := range []string{authserver.MetadataPath, authserver.JWKSPath, authserver.TokenPath, authserver.RegisterPath, authserver.RevokePath} {
		add("MarketplaceFunction", http.MethodOptions, p)
	}
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
		add("McpFunction", m, "/mcp/x")
	}
	add("McpFunction", http.MethodGet, "/.well-known/oauth-protected-resource/mcp/x")
	return out
}

// routeMatches reports whether an API Gateway HTTP API route key ("ANY /a/{b}/{proxy+}")
// takes the request "METHOD /a/x/y": {name} is one segment, {name+} one or more.
func routeMatches(key, req string) bool {
	km, kp, _ := strings.Cut(key, " ")
	rm, rp, _ := strings.Cut(req, " ")
	if km != "ANY" && km != rm {
		return false
	}
	ks, rs := strings.Split(kp, "/"), strings.Split(rp, "/")
	for i, seg := range ks {
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "+}") {
			return len(rs) > i && rs[i] != ""
		}
		if i >= len(rs) || !(seg == rs[i] || strings.HasPrefix(seg, "{") && rs[i] != "") {
			return false
		}
	}
	return len(ks) == len(rs)
}

// TestServedRoutesAreDeployed: every request the handlers serve has a route in
// template.yaml to the function that serves it (TestParitySAMvsCDK then holds the CDK app
// to the same table). A route left out of the stacks fails here.
func TestServedRoutesAreDeployed(t *testing.T) {
	routes := samFacts(t, parseSAM(t, nil)).Routes
	for req, fn := range servedRequests() {
		var got []string
		for key, id := range routes {
			if routeMatches(key, req) {
				got = append(got, key+" → "+id)
				if id != fn {
					t.Errorf("%s is routed by %s to %s, served by %s", req, key, id, fn)
				}
			}
		}
		if len(got) == 0 {
			t.Errorf("%s (served by %s) has no route in template.yaml", req, fn)
		}
	}
	// Not vacuous: the matcher refuses what API Gateway refuses.
	for _, c := range []struct {
		key, req string
		want     bool
	}{
		{"ANY /oauth/{proxy+}", "POST /oauth/token", true},
		{"ANY /oauth/{proxy+}", "GET /oauth", false},
		{"GET /api/oauth/{proxy+}", "POST /api/oauth/consent", false},
		{"ANY /api/connected-clients/{id}", "DELETE /api/connected-clients/x", true},
		{"ANY /api/connected-clients/{id}", "DELETE /api/connected-clients/x/y", false},
		{"GET /api/usage", "GET /api/usage", true},
	} {
		if got := routeMatches(c.key, c.req); got != c.want {
			t.Errorf("routeMatches(%q, %q) = %v, want %v", c.key, c.req, got, c.want)
		}
	}
}

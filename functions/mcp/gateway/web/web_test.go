package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
)

// on returns a POST to target that arrived on the listener at local ("" = none, as behind
// API Gateway), with Host host and Origin origin ("" = none).
func on(local, host, origin string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "http://"+host+"/mcp", nil)
	r.Host = host
	if origin != "" {
		r.Header.Set("Origin", origin)
	}
	if local != "" {
		addr, _ := net.ResolveTCPAddr("tcp", local)
		r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, addr))
	}
	return r
}

func TestOriginAllowed(t *testing.T) {
	t.Parallel()
	s := &Site{AllowedOrigins: []string{"https://app.example"}}
	tests := []struct {
		name                string
		local, host, origin string
		want                bool
	}{
		{"behind API Gateway, no Origin", "", "gw.example", "", true},
		{"behind API Gateway, an allowed Origin", "", "gw.example", "https://app.example", true},
		{"behind API Gateway, another Origin", "", "gw.example", "https://evil.example", false},
		{"behind API Gateway, a loopback Origin", "", "gw.example", "http://localhost:3000", false},
		{"loopback, loopback Host", "127.0.0.1:8080", "localhost:8080", "", true},
		{"loopback, [::1] Host", "[::1]:8080", "[::1]:8080", "", true},
		{"loopback, DNS rebinding Host", "127.0.0.1:8080", "evil.example:8080", "", false},
		{"loopback, loopback Origin", "127.0.0.1:8080", "127.0.0.1:8080", "http://127.0.0.1:5173", true},
		{"loopback, another Origin", "127.0.0.1:8080", "127.0.0.1:8080", "https://evil.example", false},
		{"loopback, a non-HTTP loopback Origin", "127.0.0.1:8080", "127.0.0.1:8080", "file://localhost", false},
		{"a non-loopback listener, a loopback Host", "10.0.0.5:8080", "localhost", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := s.OriginAllowed(on(tt.local, tt.host, tt.origin)); got != tt.want {
				t.Errorf("OriginAllowed = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestBaseURLAndCORS(t *testing.T) {
	t.Parallel()
	r := on("", "gw.example", "https://app.example")
	if got := (&Site{}).BaseURL(r); got != "http://gw.example" {
		t.Errorf("BaseURL = %q", got)
	}
	r.Header.Set("X-Forwarded-Proto", "https")
	if got := (&Site{}).BaseURL(r); got != "https://gw.example" {
		t.Errorf("BaseURL behind TLS = %q", got)
	}
	if got := (&Site{PublicBaseURL: "https://mcp.example"}).BaseURL(r); got != "https://mcp.example" {
		t.Errorf("BaseURL with PublicBaseURL = %q", got)
	}
	rec := httptest.NewRecorder()
	CORS(rec, r)
	if rec.Header().Get("Access-Control-Allow-Origin") != "https://app.example" || !strings.Contains(rec.Header().Get("Access-Control-Expose-Headers"), "WWW-Authenticate") {
		t.Errorf("CORS headers = %v", rec.Header())
	}
	rec = httptest.NewRecorder()
	CORS(rec, on("", "gw.example", ""))
	if len(rec.Header()) != 0 {
		t.Errorf("CORS without an Origin = %v, want none", rec.Header())
	}
}

func TestBearerChallenge(t *testing.T) {
	t.Parallel()
	const md = "https://gw.example/.well-known/oauth-protected-resource/mcp"
	if got := BearerChallenge(apperr.New(apperr.Unauthenticated, "missing bearer token"), "missing bearer token", md); got != `Bearer resource_metadata="`+md+`"` {
		t.Errorf("missing token: %s", got)
	}
	err := fmt.Errorf("%w: expired", auth.ErrInvalidToken)
	got := BearerChallenge(err, "token \"x\" expired\\\n at 10:00 ✓", md)
	if want := `Bearer resource_metadata="` + md + `", error="invalid_token", error_description="token x expired at 10:00 "`; got != want {
		t.Errorf("refused token:\n got %s\nwant %s", got, want)
	}
}

func TestNoAccess(t *testing.T) {
	t.Parallel()
	const ws = "7b0c1f9e-2a4b-4c1d-9e8f-0a1b2c3d4e5f"
	tests := []struct {
		name       string
		workspaces []string
		ws         string
		want       string
	}{
		{"none", nil, ws, "no access to workspace " + ws + ": this token carries no workspace"},
		{"one", []string{"w1"}, ws, "this token is for workspace w1; use https://gw.example/mcp/w1"},
		{"many", []string{"w1", "w2"}, ws, "this token is for workspaces w1, w2; use https://gw.example/mcp/<one of them>"},
		{"not a UUID is not echoed", nil, "<script>", "no access to this workspace:"},
	}
	for _, tt := range tests {
		e := NoAccess(&auth.Principal{Workspaces: tt.workspaces}, tt.ws, "https://gw.example")
		if e.Code != apperr.Forbidden || !strings.Contains(e.Message, tt.want) {
			t.Errorf("%s: %s %q, want FORBIDDEN containing %q", tt.name, e.Code, e.Message, tt.want)
		}
	}
	many := make([]string, 12)
	for i := range many {
		many[i] = fmt.Sprintf("w%02d", i)
	}
	if e := NoAccess(&auth.Principal{Workspaces: many}, ws, "b"); strings.Contains(e.Message, "w10") {
		t.Errorf("more than 10 workspaces are listed: %q", e.Message)
	}
}

func TestServeNoEndpoint(t *testing.T) {
	t.Parallel()
	s := &Site{PublicBaseURL: "https://gw.example"}
	for path, want := range map[string]string{
		"/mcp/":                 "remove the trailing slash (the endpoint is https://gw.example/mcp)",
		"/mcp/ws1/":             "remove the trailing slash (the endpoint is https://gw.example/mcp/ws1)",
		"/mcp/ws1/servers/gh//": "remove the trailing slash (the endpoint is https://gw.example/mcp/ws1/servers/gh)",
		"/mcp/ws1/tools":        "the endpoints are /mcp, /mcp/{workspaceId} and /mcp/{workspaceId}/servers/{handle}",
		"/mcp/ws1/servers/":     "the endpoints are",
	} {
		rec := httptest.NewRecorder()
		s.ServeNoEndpoint(rec, httptest.NewRequest(http.MethodPost, path, nil))
		var m struct {
			Error struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if rec.Code != http.StatusNotFound || json.Unmarshal(rec.Body.Bytes(), &m) != nil || m.Error.Code != -32600 || !strings.Contains(m.Error.Message, want) {
			t.Errorf("%s: %d %s; want 404 -32600 containing %q", path, rec.Code, rec.Body, want)
		}
	}
	rec := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodOptions, "/mcp/", nil)
	r.Header.Set("Origin", "https://app.example")
	s.ServeNoEndpoint(rec, r)
	if rec.Code != http.StatusNoContent || rec.Header().Get("Access-Control-Allow-Origin") == "" {
		t.Errorf("preflight: %d %v", rec.Code, rec.Header())
	}
}

func TestServeResourceMetadata(t *testing.T) {
	t.Parallel()
	const ws = "7b0c1f9e-2a4b-4c1d-9e8f-0a1b2c3d4e5f"
	tests := []struct {
		name   string
		site   Site
		path   string
		status int
		want   map[string]any
	}{
		{"bare: the gateway-wide /mcp", Site{PublicBaseURL: "https://gw.example", AuthServerURL: "https://idp.example"}, MetadataPrefix, 200,
			map[string]any{"resource": "https://gw.example/mcp", "authorization_servers": []any{"https://idp.example"}}},
		{"a workspace's URL, own server", Site{PublicBaseURL: "https://gw.example", OwnAuthServer: true}, MetadataPrefix + "/mcp/" + ws, 200,
			map[string]any{"resource": "https://gw.example/mcp/" + ws, "authorization_servers": []any{"https://gw.example"}, "scopes_supported": []any{"mcp"}}},
		{"a URL the gateway does not serve", Site{PublicBaseURL: "https://gw.example"}, MetadataPrefix + "/api/x", 404,
			map[string]any{"error": "not_found"}},
	}
	for _, tt := range tests {
		rec := httptest.NewRecorder()
		tt.site.ServeResourceMetadata(rec, httptest.NewRequest(http.MethodGet, tt.path, nil))
		var got map[string]any
		if rec.Code != tt.status || json.Unmarshal(rec.Body.Bytes(), &got) != nil {
			t.Fatalf("%s: %d %s", tt.name, rec.Code, rec.Body)
		}
		for k, v := range tt.want {
			if fmt.Sprint(got[k]) != fmt.Sprint(v) {
				t.Errorf("%s: %s = %v, want %v", tt.name, k, got[k], v)
			}
		}
	}
	site := &Site{PublicBaseURL: "https://gw.example"}
	if got := site.ResourceMetadataURL(httptest.NewRequest(http.MethodPost, "/mcp/"+ws+"/servers/gh", nil)); got != "https://gw.example"+MetadataPrefix+"/mcp/"+ws+"/servers/gh" {
		t.Errorf("ResourceMetadataURL = %s", got)
	}
	if got := site.ResourceMetadataURL(httptest.NewRequest(http.MethodPost, "/mcp/not-a-uuid", nil)); got != "https://gw.example"+MetadataPrefix+"/mcp" {
		t.Errorf("ResourceMetadataURL of a path that is no MCP URL = %s, want the gateway-wide document", got)
	}
}

package connections_test

import (
	"testing"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/connections"
	"github.com/agentpack/gateway/shared/urlguard"
)

// TestCreateErrorsNameTheField: a refused connection write names the request field in the
// error's details ({"field": …}, which the console places on its form field), and a
// refused header keeps naming the header instead. The checks run before any storage, so
// the service needs no database here.
func TestCreateErrorsNameTheField(t *testing.T) {
	t.Parallel()
	s := &connections.Service{Guard: urlguard.New(&urlguard.Options{})}
	su := &auth.Principal{Subject: "root", Role: auth.RoleSuperuser}
	for _, tc := range []struct {
		name string
		in   connections.CreateInput
		want map[string]string
	}{
		{"blank name", connections.CreateInput{Name: " ", URL: "https://mcp.example.com/mcp"}, map[string]string{"field": "name"}},
		{"not a URL", connections.CreateInput{Name: "x", URL: "not a url"}, map[string]string{"field": "url"}},
		{"private address", connections.CreateInput{Name: "x", URL: "https://10.0.0.5/mcp"}, map[string]string{"field": "url"}},
		{"transport", connections.CreateInput{Name: "x", URL: "https://mcp.example.com/mcp", TransportType: "carrier-pigeon"}, map[string]string{"field": "transportType"}},
	} {
		_, err := s.Create(t.Context(), su, tc.in)
		e := apperr.As(err)
		if e == nil || e.Code != apperr.Validation {
			t.Errorf("%s: %v, want VALIDATION_ERROR", tc.name, err)
			continue
		}
		if d, _ := e.Details.(map[string]string); d["field"] != tc.want["field"] {
			t.Errorf("%s: details %v, want %v", tc.name, e.Details, tc.want)
		}
	}
	_, err := s.Create(t.Context(), su, connections.CreateInput{Name: "x", URL: "https://mcp.example.com/mcp",
		Headers: map[string]string{"Host": "evil.example"}})
	e := apperr.As(err)
	if e == nil {
		t.Fatal("a gateway-owned header was accepted")
	}
	if d, ok := e.Details.(map[string]any); !ok || d["header"] == nil || d["field"] != nil {
		t.Errorf("refused header: details %#v, want the header named and no field", e.Details)
	}
}

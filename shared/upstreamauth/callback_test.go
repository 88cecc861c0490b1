package upstreamauth_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentpack/gateway/shared/upstreamauth"
)

func TestClientMetadataDocument(t *testing.T) {
	t.Parallel()
	const cimd = "https://gw.example/api/oauth/client-metadata.json"
	svc := upstreamauth.New(upstreamauth.Options{Store: &upstreamauth.MemoryStore{}, ClientMetadataURL: cimd,
		RedirectURL: "https://gw.example/api/oauth/callback"})
	rec := httptest.NewRecorder()
	svc.ClientMetadataHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/api/oauth/client-metadata.json", nil))
	var doc struct {
		ClientID                string   `json:"client_id"`
		RedirectURIs            []string `json:"redirect_uris"`
		TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
		ApplicationType         string   `json:"application_type"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil || rec.Code != 200 {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	if doc.ClientID != cimd || len(doc.RedirectURIs) != 1 || doc.RedirectURIs[0] != "https://gw.example/api/oauth/callback" ||
		doc.TokenEndpointAuthMethod != "none" || doc.ApplicationType != "web" {
		t.Errorf("document = %+v", doc)
	}
	off := upstreamauth.New(upstreamauth.Options{Store: &upstreamauth.MemoryStore{}, RedirectURL: "http://127.0.0.1:8080/api/oauth/callback"})
	rec = httptest.NewRecorder()
	off.ClientMetadataHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if rec.Code != http.StatusNotFound {
		t.Errorf("without an https base URL: %d", rec.Code)
	}
}

func TestCallbackPage(t *testing.T) {
	t.Parallel()
	svc := upstreamauth.New(upstreamauth.Options{Store: &upstreamauth.MemoryStore{}, RedirectURL: "https://gw.example/cb"})
	h := svc.CallbackHandler(nil, nil)
	for _, tc := range []struct {
		name, method, target string
		want                 int
		contains             string
	}{
		{"no state", "GET", "/cb", 400, "unknown or was already used"},
		{"unknown state", "GET", "/cb?state=nope&code=x", 400, `data-status="authorization_required"`},
		{"markup in the query is not echoed", "GET", "/cb?state=%3Cscript%3E&error=%3Cb%3E", 400, "Authorization needed"},
		{"POST", "POST", "/cb", 405, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.target, nil))
			if rec.Code != tc.want || !strings.Contains(rec.Body.String(), tc.contains) || strings.Contains(rec.Body.String(), "<script>") {
				t.Errorf("%d %s", rec.Code, rec.Body)
			}
			if tc.method == "GET" && (rec.Header().Get("Cache-Control") != "no-store" || rec.Header().Get("Referrer-Policy") != "no-referrer") {
				t.Errorf("headers %v", rec.Header())
			}
		})
	}
}

package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/agentpack/gateway/functions/marketplace/api"
	pinsapi "github.com/agentpack/gateway/functions/pins/api"
	"github.com/agentpack/gateway/shared/auth"
)

type openAPIDoc struct {
	OpenAPI    string                                `json:"openapi"`
	Paths      map[string]map[string]json.RawMessage `json:"paths"`
	Components struct {
		Schemas map[string]json.RawMessage `json:"schemas"`
	} `json:"components"`
}

type operation struct {
	OperationID string                     `json:"operationId"`
	Responses   map[string]json.RawMessage `json:"responses"`
	Security    *[]any                     `json:"security"`
}

// pinsRoutes are the pins function's routes (functions/pins/api), described in the same
// document.
var pinsRoutes = []string{
	"GET /api/chats",
	"POST /api/chats",
	"GET /api/chats/{chatId}/pins",
	"POST /api/chats/{chatId}/pins",
	"DELETE /api/chats/{chatId}/pins/{pinId}",
	"GET /api/chats/{chatId}/tools",
}

// TestOpenAPI checks openapi.json against the real routes: every documented operation
// exists in the live mux (it answers 401 without a token, not 404/405), every registered
// route is documented, every $ref resolves, operation ids are unique, and every
// authenticated operation documents 401.
func TestOpenAPI(t *testing.T) {
	t.Parallel()
	v, err := auth.NewVerifier(t.Context(), auth.Options{Secret: "openapi-test"})
	if err != nil {
		t.Fatal(err)
	}
	market := httptest.NewServer((&api.API{Verifier: v}).Handler())
	defer market.Close()
	pins := httptest.NewServer((&pinsapi.API{Verifier: v}).Handler())
	defer pins.Close()

	resp, err := http.Get(market.URL + api.OpenAPIPath)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET %s: %d %s", api.OpenAPIPath, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var doc openAPIDoc
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi = %q", doc.OpenAPI)
	}

	documented := map[string]bool{}
	ids := map[string]bool{}
	param := regexp.MustCompile(`\{[^}]+\}`)
	for path, item := range doc.Paths {
		for method, rawOp := range item {
			if method == "parameters" {
				continue
			}
			var op operation
			if err := json.Unmarshal(rawOp, &op); err != nil {
				t.Fatalf("%s %s: %v", method, path, err)
			}
			pattern := strings.ToUpper(method) + " " + path
			documented[pattern] = true
			if op.OperationID == "" || ids[op.OperationID] {
				t.Errorf("%s: missing or duplicate operationId %q", pattern, op.OperationID)
			}
			ids[op.OperationID] = true
			public := op.Security != nil && len(*op.Security) == 0
			if _, ok := op.Responses["401"]; !ok && !public {
				t.Errorf("%s does not document 401", pattern)
			}
			if pattern == "GET "+api.OAuthCallbackPath {
				// Served only when upstream authorization is configured (not in this bare
				// mux); the upstream-auth tests exercise it and check its answers against
				// this document (stacktest.CheckOpenAPI).
				continue
			}
			// Probe the live mux.
			base := market.URL
			if strings.HasPrefix(path, "/api/chats") {
				base = pins.URL
			}
			url := base + param.ReplaceAllString(path, "00000000-0000-4000-8000-000000000000")
			req, _ := http.NewRequest(strings.ToUpper(method), url, nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			wantCode := http.StatusUnauthorized
			if public {
				wantCode = http.StatusOK
			}
			if resp.StatusCode != wantCode {
				t.Errorf("%s: the live mux answers %d without a token, want %d (route missing?)", pattern, resp.StatusCode, wantCode)
			}
		}
	}

	// Every registered route is documented; every documented route is registered.
	var registered []string
	for _, r := range api.Routes {
		registered = append(registered, r.Pattern)
	}
	registered = append(registered, "GET "+api.OpenAPIPath, "GET "+api.OAuthCallbackPath)
	registered = append(registered, pinsRoutes...)
	for _, r := range registered {
		if !documented[r] {
			t.Errorf("route %s is not in openapi.json", r)
		}
	}
	var extra []string
	for d := range documented {
		if !slices.Contains(registered, d) {
			extra = append(extra, d)
		}
	}
	sort.Strings(extra)
	if len(extra) > 0 {
		t.Errorf("openapi.json documents routes that are not registered: %v", extra)
	}

	// Every $ref resolves.
	for _, m := range regexp.MustCompile(`"\$ref":\s*"#/components/schemas/([^"]+)"`).FindAllStringSubmatch(string(raw), -1) {
		if _, ok := doc.Components.Schemas[m[1]]; !ok {
			t.Errorf("dangling $ref %s", m[1])
		}
	}
	if strings.Contains(string(raw), "#/components/responses/") {
		t.Error("openapi.json refers to components/responses, which it does not define")
	}
}

// TestOpenAPIGenerated: the committed openapi.json is what build makes of the route
// tables and their types today; after changing either, run `go generate
// ./functions/marketplace/api`.
func TestOpenAPIGenerated(t *testing.T) {
	t.Parallel()
	want, err := build()
	if err != nil {
		t.Fatal(err)
	}
	if got := api.OpenAPIDocument(); string(got) != string(want) {
		t.Fatalf("openapi.json is not the generated document (%d bytes committed, %d generated): run go generate ./functions/marketplace/api", len(got), len(want))
	}
}

package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/httpapi"
)

// TestDecodeUnknownField pins encoding/json's text for an unknown field (the standard
// library has no sentinel for it): the client is told which field, as VALIDATION_ERROR.
// A Go release that changes the text fails here, not silently in production.
func TestDecodeUnknownField(t *testing.T) {
	cases := []struct{ body, want string }{
		{`{"name":"x","extra":1}`, `malformed JSON body: unknown field "extra"`},
		{`{"name":`, `malformed JSON body: invalid JSON`},
		{`{"name":1}`, `malformed JSON body: field "name" must be a string`},
		{`{"name":"x"} {}`, `request body holds more than one JSON value`},
	}
	for _, c := range cases {
		var v struct {
			Name string `json:"name"`
		}
		r := httptest.NewRequest("POST", "/", strings.NewReader(c.body))
		e := apperr.As(httpapi.Decode(httptest.NewRecorder(), r, &v))
		if e == nil || e.Code != apperr.Validation || e.Message != c.want {
			t.Errorf("%s: %v, want %q", c.body, e, c.want)
		}
	}
}

// TestDecodeSpeaksJSON (issue 25): a value of the wrong JSON type is described by its JSON
// type, for a field and for the whole body, never by the Go type it decodes into.
func TestDecodeSpeaksJSON(t *testing.T) {
	type in struct {
		Name    string            `json:"name"`
		Headers map[string]string `json:"headers"`
		Tags    []string          `json:"tags"`
		Enabled *bool             `json:"enabled"`
		Limit   int               `json:"limit"`
		Score   float64           `json:"score"`
		Nested  struct{ A int }   `json:"nested"`
		Any     map[string]any    `json:"any"`
	}
	cases := []struct{ body, want string }{
		{`[]`, `malformed JSON body: the body must be an object`},
		{`"x"`, `malformed JSON body: the body must be an object`},
		{`{"headers":[]}`, `malformed JSON body: field "headers" must be an object of strings`},
		{`{"headers":{"a":1}}`, `malformed JSON body: field "headers" must be a string`},
		{`{"tags":{}}`, `malformed JSON body: field "tags" must be an array`},
		{`{"enabled":"yes"}`, `malformed JSON body: field "enabled" must be a boolean`},
		{`{"limit":1.5}`, `malformed JSON body: field "limit" must be an integer`},
		{`{"score":"x"}`, `malformed JSON body: field "score" must be a number`},
		{`{"nested":1}`, `malformed JSON body: field "nested" must be an object`},
		{`{"any":1}`, `malformed JSON body: field "any" must be an object`},
	}
	for _, c := range cases {
		var v in
		r := httptest.NewRequest("POST", "/", strings.NewReader(c.body))
		e := apperr.As(httpapi.Decode(httptest.NewRecorder(), r, &v))
		if e == nil || e.Code != apperr.Validation || e.Message != c.want {
			t.Errorf("%s: %v, want %q", c.body, e, c.want)
		}
	}
}

// TestRoutes: an unmatched request gets the REST error body — 404 NOT_FOUND, or 405
// METHOD_NOT_ALLOWED with the Allow header of the path's methods — and a matched one
// passes through untouched.
func TestRoutes(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /things", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok")) })
	mux.HandleFunc("POST /things", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusCreated) })
	h := httpapi.Routes(mux)
	cases := []struct {
		method, path string
		status       int
		body, allow  string
	}{
		{"GET", "/things", 200, "ok", ""},
		{"POST", "/things", 201, "", ""},
		{"DELETE", "/things", 405, `"code":"METHOD_NOT_ALLOWED","message":"DELETE is not allowed on /things"`, "GET, HEAD, POST"},
		{"GET", "/nope", 404, `"code":"NOT_FOUND","message":"no route for GET /nope"`, ""},
	}
	for _, c := range cases {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(c.method, c.path, nil))
		if rec.Code != c.status || !strings.Contains(rec.Body.String(), c.body) || rec.Header().Get("Allow") != c.allow {
			t.Errorf("%s %s: %d %q Allow %q", c.method, c.path, rec.Code, rec.Body, rec.Header().Get("Allow"))
		}
		if c.status >= 400 && rec.Header().Get("Content-Type") != "application/json" {
			t.Errorf("%s %s: Content-Type %q", c.method, c.path, rec.Header().Get("Content-Type"))
		}
	}
}

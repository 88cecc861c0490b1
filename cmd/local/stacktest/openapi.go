package stacktest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentpack/gateway/functions/marketplace/api"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// OpenAPIChecker checks REST responses against an OpenAPI document: the route (method and
// path) must be documented, the status documented for it, the Content-Type one of that
// response's media types, and the body valid against its schema
// (openapi3filter.ValidateResponse, JSON Schema 2020-12 for a 3.1 document). A response
// documented without content must have an empty body.
type OpenAPIChecker struct {
	doc    *openapi3.T
	router routers.Router
}

// NewOpenAPIChecker loads and validates spec (an OpenAPI document as JSON). Errors: the
// document does not parse or is not a valid OpenAPI document.
func NewOpenAPIChecker(spec []byte) (*OpenAPIChecker, error) {
	// The OAuth callback answers an HTML page, checked as a string.
	htmlDecoder.Do(func() { openapi3filter.RegisterBodyDecoder("text/html", openapi3filter.PlainBodyDecoder) })
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(spec)
	if err != nil {
		return nil, fmt.Errorf("openapi: load: %w", err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		return nil, fmt.Errorf("openapi: invalid document: %w", err)
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("openapi: router: %w", err)
	}
	return &OpenAPIChecker{doc: doc, router: router}, nil
}

var (
	htmlDecoder        sync.Once
	productChecker     *OpenAPIChecker
	productCheckerErr  error
	productCheckerOnce sync.Once
)

// ProductOpenAPI is the checker of the product's document (api.OpenAPIDocument), loaded
// once per process.
func ProductOpenAPI() (*OpenAPIChecker, error) {
	productCheckerOnce.Do(func() { productChecker, productCheckerErr = NewOpenAPIChecker(api.OpenAPIDocument()) })
	return productChecker, productCheckerErr
}

// Check validates one response to r: status, header and the whole body as received. It
// returns nil when the response matches the document, else an error naming the route and
// what differs.
func (c *OpenAPIChecker) Check(r *http.Request, status int, header http.Header, body []byte) error {
	route, params, err := c.router.FindRoute(r)
	if errors.Is(err, routers.ErrMethodNotAllowed) && status == http.StatusMethodNotAllowed {
		return c.checkMethodNotAllowed(r, header)
	}
	if err != nil {
		return fmt.Errorf("%s %s: route not in the OpenAPI document: %w", r.Method, r.URL.Path, err)
	}
	ref := route.Operation.Responses.Status(status)
	if ref == nil {
		ref = route.Operation.Responses.Default()
	}
	if ref != nil && ref.Value != nil && len(ref.Value.Content) == 0 && len(body) > 0 {
		return fmt.Errorf("%s %s: status %d is documented without a body, got %q", r.Method, r.URL.Path, status, clip(body))
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: route},
		Status:                 status,
		Header:                 header,
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	in.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		return fmt.Errorf("%s %s: status %d: %w; body %s", r.Method, r.URL.Path, status, err, clip(body))
	}
	return nil
}

// checkMethodNotAllowed accepts the 405 answered for a method the document does not list on
// a documented path when its Allow header (RFC 9110 §15.5.6) names exactly the documented
// methods (HEAD aside, which http.ServeMux adds to GET).
func (c *OpenAPIChecker) checkMethodNotAllowed(r *http.Request, header http.Header) error {
	var documented []string
	for _, m := range []string{http.MethodGet, http.MethodPut, http.MethodPost, http.MethodDelete, http.MethodPatch} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, _, err := c.router.FindRoute(probe); err == nil {
			documented = append(documented, m)
		}
	}
	var allowed []string
	for _, m := range strings.Split(header.Get("Allow"), ",") {
		if m = strings.TrimSpace(m); m != "" && m != http.MethodHead {
			allowed = append(allowed, m)
		}
	}
	slices.Sort(documented)
	slices.Sort(allowed)
	if !slices.Equal(documented, allowed) {
		return fmt.Errorf("%s %s: 405 with Allow %q, but the document lists %v on this path",
			r.Method, r.URL.Path, header.Get("Allow"), documented)
	}
	return nil
}

func clip(b []byte) string {
	if len(b) > 600 {
		return string(b[:600]) + "…"
	}
	return string(b)
}

// CheckedPrefix is the path prefix of the REST routes the middleware checks: the MCP
// endpoints, the console and health routes are not part of the REST document.
const CheckedPrefix = "/api/"

// Middleware serves next and checks every response to a request under CheckedPrefix,
// passing each mismatch to report (usually a test's Errorf). The response reaches the
// client unchanged.
func (c *OpenAPIChecker) Middleware(report func(error), next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, CheckedPrefix) {
			next.ServeHTTP(w, r)
			return
		}
		rec := &recorder{ResponseWriter: w}
		// The route is matched on the request as received (the handler may change r.URL).
		orig := r.Clone(r.Context())
		next.ServeHTTP(rec, r)
		if rec.status == 0 && r.Context().Err() != nil {
			// The client went away (a browser navigating on aborts its fetches) and the
			// handler wrote nothing (httpapi.Error): no response exists to check.
			return
		}
		if rec.status == 0 {
			rec.status = http.StatusOK
		}
		if err := c.Check(orig, rec.status, w.Header(), rec.body.Bytes()); err != nil {
			report(err)
		}
	})
}

// recorder passes a response through and keeps its status and body.
type recorder struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	r.body.Write(p)
	return r.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// CheckOpenAPI wraps h so that every REST response it serves is checked against the
// product's OpenAPI document (ProductOpenAPI), each mismatch failing t (Errorf). Test
// servers built around a REST handler use it so that their responses are checked too.
func CheckOpenAPI(t testing.TB, h http.Handler) http.Handler {
	t.Helper()
	oas, err := ProductOpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	return oas.Middleware(func(err error) { t.Errorf("OpenAPI: %v", err) }, h)
}

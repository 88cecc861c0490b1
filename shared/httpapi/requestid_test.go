package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/agentpack/gateway/shared/httpapi"
	"github.com/agentpack/gateway/shared/logx"
	"github.com/aws/aws-lambda-go/lambdacontext"
)

// TestRequestID: the id is the one the context carries, else the invocation's Lambda
// request id, else a new one — never the client's X-Request-Id.
func TestRequestID(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		ctx  func(*http.Request) *http.Request
		want string // "" = a new 16-hex id
	}{
		{"context", func(r *http.Request) *http.Request {
			return r.WithContext(logx.WithRequestID(r.Context(), "ctx-id"))
		}, "ctx-id"},
		{"lambda", func(r *http.Request) *http.Request {
			return r.WithContext(lambdacontext.NewContext(r.Context(), &lambdacontext.LambdaContext{AwsRequestID: "lambda-id"}))
		}, "lambda-id"},
		{"new", func(r *http.Request) *http.Request { return r }, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var got string
			h := httpapi.RequestID(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = logx.RequestID(r.Context()) }))
			req := httptest.NewRequest("GET", "/", nil)
			req.Header.Set("X-Request-Id", "client-forged")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, c.ctx(req))
			if c.want != "" && got != c.want || c.want == "" && (len(got) != 16 || got == "client-forged") {
				t.Errorf("request id %q, want %q", got, c.want)
			}
			if c.name != "context" && rec.Header().Get("X-Request-Id") != got {
				t.Errorf("X-Request-Id %q, id %q", rec.Header().Get("X-Request-Id"), got)
			}
		})
	}
}

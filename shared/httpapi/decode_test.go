package httpapi_test

import (
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
		{`{"name":1}`, `malformed JSON body: field "name" must be string`},
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

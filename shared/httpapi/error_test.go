package httpapi_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/httpapi"
)

// TestErrorWrappedServiceError: a service error wrapped with context (fmt.Errorf %w, as
// the services do: "connections: uninstall <id>: …") still maps to its code's status and
// client message; the wrapping text never reaches the client.
func TestErrorWrappedServiceError(t *testing.T) {
	driver := errors.New("driver detail")
	for _, tc := range []struct {
		err    *apperr.Error
		status int
	}{
		{apperr.New(apperr.NotFound, "no such pin"), http.StatusNotFound},
		{apperr.Wrap(driver, apperr.Conflict, "already exists"), http.StatusConflict},
		{apperr.New(apperr.Forbidden, "requires the admin role"), http.StatusForbidden},
		{apperr.Wrap(driver, apperr.Unavailable, "database unavailable").WithHint("retry shortly"), http.StatusServiceUnavailable},
		{apperr.New(apperr.InvalidReference, "bad reference"), http.StatusUnprocessableEntity},
	} {
		wrapped := fmt.Errorf("outer op: %w", fmt.Errorf("connections: uninstall %s from %s: %w", "e1", "w1", tc.err))
		rec := httptest.NewRecorder()
		httpapi.Error(rec, httptest.NewRequest(http.MethodDelete, "/x", nil), slog.New(slog.DiscardHandler), wrapped)
		if rec.Code != tc.status {
			t.Errorf("%s wrapped: status %d, want %d", tc.err.Code, rec.Code, tc.status)
		}
		var body struct {
			Error httpapi.ErrorBody `json:"error"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Fatal(err)
		}
		if body.Error.Code != tc.err.Code || body.Error.Message != tc.err.Message || body.Error.Hint != tc.err.Hint {
			t.Errorf("%s wrapped: body %+v, want code, message and hint of %v", tc.err.Code, body.Error, tc.err)
		}
		if strings.Contains(rec.Body.String(), "uninstall") || strings.Contains(rec.Body.String(), "driver detail") {
			t.Errorf("%s wrapped: the body leaks the wrapping or the cause: %s", tc.err.Code, rec.Body.String())
		}
	}
	// An unclassified error stays INTERNAL_ERROR (500) however it is wrapped.
	rec := httptest.NewRecorder()
	httpapi.Error(rec, httptest.NewRequest(http.MethodGet, "/x", nil), slog.New(slog.DiscardHandler),
		fmt.Errorf("pins: pin c1 to chat c2: %w", errors.New("boom")))
	if rec.Code != http.StatusInternalServerError || strings.Contains(rec.Body.String(), "boom") {
		t.Errorf("unclassified wrapped: %d %s, want 500 without the cause", rec.Code, rec.Body.String())
	}
}

type wait int

func (w wait) RetryAfter() int { return int(w) }

// TestErrorRateLimited: RATE_LIMITED is 429 with Retry-After from the details' wait (at
// least 1 s); without such details there is no header.
func TestErrorRateLimited(t *testing.T) {
	for _, tc := range []struct {
		details any
		header  string
	}{{wait(17), "17"}, {wait(0), "1"}, {map[string]int{"x": 1}, ""}} {
		rec := httptest.NewRecorder()
		httpapi.Error(rec, httptest.NewRequest(http.MethodGet, "/x", nil), slog.New(slog.DiscardHandler),
			apperr.New(apperr.RateLimited, "slow down").WithDetails(tc.details))
		if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != tc.header {
			t.Errorf("%v: %d Retry-After %q, want 429 %q", tc.details, rec.Code, rec.Header().Get("Retry-After"), tc.header)
		}
	}
}

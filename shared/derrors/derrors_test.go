package derrors

import (
	"errors"
	"testing"

	"github.com/agentpack/gateway/shared/apperr"
)

func TestWrap(t *testing.T) {
	var err error
	Wrap(&err, "op(%s)", "x")
	if err != nil {
		t.Fatalf("a nil error became %v", err)
	}
	base := apperr.New(apperr.NotFound, "no such connection")
	err = base
	Wrap(&err, "connections.Get(%s)", "c1")
	if err.Error() != "connections.Get(c1): NOT_FOUND: no such connection" {
		t.Errorf("message %q", err.Error())
	}
	if !errors.Is(err, base) || apperr.CodeOf(err) != apperr.NotFound {
		t.Errorf("the wrapped error lost its identity or kind: %v", err)
	}
}

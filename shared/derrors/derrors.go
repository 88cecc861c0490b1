// Package derrors annotates errors on their way out of a service method, as pkgsite's
// internal/derrors does: one deferred call at the top of the method names the operation
// and its ids, and the error underneath stays reachable with errors.Is and errors.As (an
// *apperr.Error keeps its kind, status and public message; only logs see the annotation).
//
//	func (s *Service) Get(ctx context.Context, id string) (_ *View, err error) {
//		defer derrors.Wrap(&err, "connections.Get(%s)", id)
//		…
//	}
//
// Every exported method of a shared service that returns an error starts so; test/rules
// TestServiceMethodsAnnotateErrors keeps it that way. Annotations carry ids only, never a
// secret (a token, an authorization code, a sealed state).
package derrors

import "fmt"

// Wrap replaces a non-nil *errp with "<format args>: <*errp>", wrapping it (%w); a nil
// error is left nil.
func Wrap(errp *error, format string, args ...any) {
	if *errp != nil {
		*errp = fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), *errp)
	}
}

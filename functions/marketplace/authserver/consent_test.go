package authserver

import "testing"

// TestFormAction: the consent page's form-action allows this origin and the client's
// redirect origin (an http(s) origin as is, another scheme by its scheme), and nothing that
// is not plainly a scheme and a host.
func TestFormAction(t *testing.T) {
	for in, want := range map[string]string{
		"":                                  "'self'",
		"https://claude.ai":                 "'self' https://claude.ai",
		"http://127.0.0.1:33525":            "'self' http://127.0.0.1:33525",
		"http://[::1]:8080":                 "'self' http://[::1]:8080",
		"vscode://vscode.github-auth":       "'self' vscode:",
		"https://a.example; script-src *":   "'self'",
		"https://a.example 'unsafe-inline'": "'self'",
	} {
		if got := formAction(in); got != want {
			t.Errorf("formAction(%q) = %q, want %q", in, got, want)
		}
	}
}

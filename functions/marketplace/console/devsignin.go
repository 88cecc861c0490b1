package console

import (
	"crypto/subtle"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/agentpack/gateway/shared/auth"
)

// DevSignInPath is the development-only sign-in route (mounted by cmd/local, never by a
// Lambda function).
const DevSignInPath = Prefix + "/dev/sign-in"

// ErrDevSignInDeployed is returned by DevSignIn when APP_ENV is "deployed".
var ErrDevSignInDeployed = errors.New("console: the development sign-in cannot be enabled when APP_ENV=deployed")

// DevSignIn is the local sign-in link of `make run`: GET DevSignInPath?code=CODE&as=ROLE
// mints an HS256 token for principals[ROLE] with secret (valid ttl) and answers 303 to
// /admin#token=…; the page moves the token to sessionStorage and drops it from the URL.
// code is a random value printed once in the banner, so that another site cannot sign a
// browser in by linking here. A wrong code is 403, an unknown role 404.
//
// It refuses to exist in deployed mode (appEnv "deployed": ErrDevSignInDeployed), and an
// empty secret or code is an error too.
func DevSignIn(appEnv, secret, code string, ttl time.Duration, principals map[string]auth.Principal) (http.Handler, error) {
	return DevSignInSession(appEnv, secret, code, ttl, principals, nil)
}

// DevSession starts the browser session of development principal p (cmd/local: a person
// of identity.DevIssuer with p's memberships, and its session cookie on w), so that the
// development sign-in and the identity provider's lead to the one session rule
// (docs/AUTH.md "The session"). An error stops the sign-in with 503.
type DevSession func(w http.ResponseWriter, r *http.Request, p auth.Principal) error

// DevSignInSession is DevSignIn that also starts the browser session with session (nil: no
// session, as DevSignIn).
func DevSignInSession(appEnv, secret, code string, ttl time.Duration, principals map[string]auth.Principal, session DevSession) (http.Handler, error) {
	if appEnv == "deployed" {
		return nil, ErrDevSignInDeployed
	}
	if secret == "" || len(code) < 16 {
		return nil, errors.New("console: the development sign-in needs the HS256 secret and a code of 16+ characters")
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Referrer-Policy", "no-referrer")
		if r.Method != http.MethodGet {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		q := r.URL.Query()
		if subtle.ConstantTimeCompare([]byte(q.Get("code")), []byte(code)) != 1 {
			http.Error(w, "wrong or missing sign-in code: use the link make run printed", http.StatusForbidden)
			return
		}
		p, ok := principals[q.Get("as")]
		if !ok {
			http.Error(w, "unknown role", http.StatusNotFound)
			return
		}
		tok, err := auth.Mint(secret, p, ttl)
		if err != nil {
			http.Error(w, "cannot mint a token", http.StatusInternalServerError)
			return
		}
		if session != nil {
			if err := session(w, r, p); err != nil {
				http.Error(w, "cannot start the browser session (is the database up?)", http.StatusServiceUnavailable)
				return
			}
		}
		http.Redirect(w, r, Prefix+"/#token="+url.QueryEscape(tok), http.StatusSeeOther)
	}), nil
}

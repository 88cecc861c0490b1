package identity

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// The one browser session rule (docs/AUTH.md "The session"): after a sign-in — through the
// organisation's identity provider, or `make run`'s development sign-in — the browser holds
// one cookie, and every page of the gateway that must know who the browser is (the console,
// the consent pages of upstream OAuth, the authorization server's authorize and consent
// pages) reads it with Sessions.Person.
//
// The cookie is sealed with AES-256-GCM (authenticated encryption: nobody can forge or
// alter it, and the email and name inside are not readable by whoever copies it from a
// disk), under a key derived with HKDF-SHA256 from the configured session key. It is
// HttpOnly, SameSite=Lax (sent on top-level navigations back from the identity provider,
// never on cross-site subrequests or POSTs), Path=/, and on an https origin Secure with the
// __Host- prefix (no Domain: no subdomain can set or read it). It expires after the
// session's TTL (8 h by default); the expiry inside the sealed value is checked, not only
// the cookie's Max-Age.
//
// Why not a library: the standard library's AES-GCM and HKDF are the library; the format
// is ~40 lines and the repository already seals upstream tokens the same way.

// Cookie names: CookieName on http (local), SecureCookieName on https.
const (
	CookieName       = "agentpack_session"
	SecureCookieName = "__Host-agentpack_session"
)

// DefaultSessionTTL is how long a browser session lasts when SessionOptions.TTL is zero.
const DefaultSessionTTL = 8 * time.Hour

// MinSessionKeyLen is the shortest session key NewSessions accepts (bytes).
const MinSessionKeyLen = 32

// maxCookieLen bounds a session cookie read (a browser keeps 4096 bytes per cookie).
const maxCookieLen = 4096

// SessionOptions configure Sessions; a nil *SessionOptions means the defaults.
type SessionOptions struct {
	// Secure marks the cookie Secure and names it SecureCookieName: set it when the
	// gateway's public origin is https (always, deployed).
	Secure bool
	// TTL is the session's lifetime; 0 means DefaultSessionTTL.
	TTL time.Duration
	// OldKeys are earlier session keys still accepted by Person (key rotation): cookies
	// are always sealed with the current key.
	OldKeys [][]byte
	// Now is the clock (tests); nil means time.Now.
	Now func() time.Time
}

// Sessions sets and reads the browser session cookie. It is safe for concurrent use.
type Sessions struct {
	aeads  []cipher.AEAD // [0] seals; all open
	secure bool
	ttl    time.Duration
	now    func() time.Time
}

// ErrSessionKey is returned by NewSessions for a key shorter than MinSessionKeyLen.
var ErrSessionKey = errors.New("identity: the session key must be at least 32 bytes")

// NewSessions returns the session rule sealing with key (at least MinSessionKeyLen bytes of
// secret: the SESSION_KEY of docs/AUTH.md) and accepting o.OldKeys too. Errors:
// ErrSessionKey.
func NewSessions(key []byte, o *SessionOptions) (*Sessions, error) {
	if o == nil {
		o = &SessionOptions{}
	}
	s := &Sessions{secure: o.Secure, ttl: o.TTL, now: o.Now}
	if s.ttl <= 0 {
		s.ttl = DefaultSessionTTL
	}
	if s.now == nil {
		s.now = time.Now
	}
	for _, k := range append([][]byte{key}, o.OldKeys...) {
		if len(k) < MinSessionKeyLen {
			return nil, ErrSessionKey
		}
		dk, err := hkdf.Key(sha256.New, k, nil, "agentpack browser session v1", 32)
		if err != nil {
			return nil, err
		}
		block, err := aes.NewCipher(dk)
		if err != nil {
			return nil, err
		}
		gcm, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		s.aeads = append(s.aeads, gcm)
	}
	return s, nil
}

// session is the sealed payload.
type session struct {
	V       int    `json:"v"`
	ID      string `json:"id"`
	Issuer  string `json:"iss"`
	Subject string `json:"sub"`
	Email   string `json:"email,omitempty"`
	Name    string `json:"name,omitempty"`
	Iat     int64  `json:"iat"`
	Exp     int64  `json:"exp"`
}

// Name is the cookie's name: SecureCookieName when Secure, else CookieName.
func (s *Sessions) Name() string {
	if s.secure {
		return SecureCookieName
	}
	return CookieName
}

// Set starts a session for p (p.ID must be set: a person Service.SignIn returned) by
// adding its cookie to w. Groups are not carried. An error (a person without ID, or a
// cookie that would exceed 4096 bytes) sets nothing.
func (s *Sessions) Set(w http.ResponseWriter, p Person) error {
	if p.ID == "" || p.Issuer == "" || p.Subject == "" {
		return errors.New("identity: a session needs a signed-in person (id, issuer, subject)")
	}
	now := s.now()
	v, err := s.seal(s.Name(), session{V: 1, ID: p.ID, Issuer: p.Issuer, Subject: p.Subject, Email: p.Email,
		Name: p.Name, Iat: now.Unix(), Exp: now.Add(s.ttl).Unix()})
	if err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{Name: s.Name(), Value: v, Path: "/", MaxAge: int(s.ttl.Seconds()),
		HttpOnly: true, Secure: s.secure, SameSite: http.SameSiteLaxMode})
	return nil
}

// seal returns v as JSON sealed for the cookie name (the name is the AEAD's associated
// data: a value moved to another cookie does not open), base64url-encoded.
func (s *Sessions) seal(name string, v any) (string, error) {
	pt, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	gcm := s.aeads[0]
	nonce := make([]byte, gcm.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	out := base64.RawURLEncoding.EncodeToString(gcm.Seal(nonce, nonce, pt, []byte(name)))
	if len(out) > maxCookieLen-len(name)-1 {
		return "", errors.New("identity: the value would not fit in a cookie")
	}
	return out, nil
}

// open reverses seal into v with any accepted key; false when the value is malformed,
// tampered with, sealed for another name or with an unknown key.
func (s *Sessions) open(name, value string, v any) bool {
	if value == "" || len(value) > maxCookieLen {
		return false
	}
	raw, err := base64.RawURLEncoding.DecodeString(value)
	if err != nil {
		return false
	}
	for _, gcm := range s.aeads {
		if len(raw) < gcm.NonceSize()+gcm.Overhead() {
			return false
		}
		pt, err := gcm.Open(nil, raw[:gcm.NonceSize()], raw[gcm.NonceSize():], []byte(name))
		if err != nil {
			continue
		}
		return json.Unmarshal(pt, v) == nil
	}
	return false
}

// Clear ends the session: it adds to w a cookie that deletes the session cookie.
func (s *Sessions) Clear(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{Name: s.Name(), Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: s.secure, SameSite: http.SameSiteLaxMode})
}

// Person returns the person of r's session cookie and true, or false when r has no
// session, or one that is expired, tampered with, sealed with an unknown key or malformed.
// The person's Groups are nil (see Person).
func (s *Sessions) Person(r *http.Request) (Person, bool) {
	c, err := r.Cookie(s.Name())
	if err != nil {
		return Person{}, false
	}
	var v session
	if !s.open(s.Name(), c.Value, &v) || v.V != 1 || v.ID == "" || v.Issuer == "" || v.Subject == "" ||
		!s.now().Before(time.Unix(v.Exp, 0)) {
		return Person{}, false
	}
	return Person{ID: v.ID, Issuer: v.Issuer, Subject: v.Subject, Email: v.Email, Name: v.Name}, true
}

// Paths of the sign-in routes, on the marketplace function's origin.
const (
	SignInPath   = "/auth/sign-in"
	CallbackPath = "/auth/callback"
	SignOutPath  = "/auth/sign-out"
)

// DefaultReturnTo is where a sign-in lands when it was given no (or no safe) return path:
// the console.
const DefaultReturnTo = "/admin/"

// maxReturnTo bounds a return path (bytes).
const maxReturnTo = 2048

// SignInURL returns the same-origin path that starts a sign-in and comes back to returnTo:
// SignInPath?return_to=<returnTo>. returnTo must be a path of this origin (SafeReturnTo);
// anything else — an absolute or protocol-relative URL, a backslash trick, a control
// character — is replaced by DefaultReturnTo, so the link can never send the browser away.
func SignInURL(returnTo string) string {
	rt, ok := SafeReturnTo(returnTo)
	if !ok {
		rt = DefaultReturnTo
	}
	return SignInPath + "?" + url.Values{"return_to": {rt}}.Encode()
}

// SafeReturnTo returns returnTo and true when it is a path of this origin to come back to
// after a sign-in: it starts with a single "/" (not "//", which a browser reads as another
// host), has no backslash (which browsers read as "/"), no control character or space, no
// scheme or host once parsed, and at most 2048 bytes. Anything else is ("", false): the
// open-redirect guard of the sign-in routes.
func SafeReturnTo(returnTo string) (string, bool) {
	if returnTo == "" || len(returnTo) > maxReturnTo || returnTo[0] != '/' ||
		strings.HasPrefix(returnTo, "//") || strings.ContainsAny(returnTo, "\\") {
		return "", false
	}
	for _, r := range returnTo {
		if r <= 0x20 || r == 0x7f {
			return "", false
		}
	}
	u, err := url.Parse(returnTo)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || !strings.HasPrefix(u.Path, "/") ||
		strings.HasPrefix(u.Path, "//") {
		return "", false
	}
	return returnTo, true
}

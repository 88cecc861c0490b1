package authserver

import (
	"context"
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/db"
	"github.com/agentpack/gateway/shared/signing"
	"github.com/ory/fosite"
	"github.com/ory/fosite/token/jwt"
)

// authorize handles the authorization endpoint (GET: the client's request; POST: the
// consent form). In order: fosite's checks of the request (client, redirect URI, response
// type, scope), the resource (RFC 8707) and PKCE S256 — errors go back to a valid redirect
// URI, or are shown as a JSON error when the redirect URI itself is wrong; then the
// browser session (no session: off to sign in, back here after); then the membership (none:
// a page saying so); then the consent, remembered per person, client and workspace; then
// the code.
func (s *Server) authorize(rw http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	rw.Header().Set("Cache-Control", "no-store")
	if err := r.ParseForm(); err != nil {
		http.Error(rw, "malformed request", http.StatusBadRequest)
		return
	}
	if s.otherOrigin(rw, r) {
		return
	}
	offeredScopes(r.Form)
	offeredScopes(r.PostForm)
	w := &issWriter{ResponseWriter: rw, iss: s.base(r)}
	if v, ok := r.Form["state"]; ok && len(v) > 0 {
		w.state = &v[0]
	}
	hint, resErr := s.resource(r)
	restore := padState(r)
	ar, err := s.provider.NewAuthorizeRequest(ctx, r)
	restore()
	if err == nil && isConsole(ar.GetClient()) && r.Form.Get("redirect_uri") != ConsoleRedirectURI(s.base(r)) {
		// Exactly <base>/admin/: fosite would take a loopback redirect URI on any port
		// (RFC 8252 §7.3), which is for native apps, not for the console (make run serves
		// it on loopback).
		s.refusalPage(w, r, fosite.ErrInvalidRequest.WithHint("The console's redirect_uri is exactly "+ConsoleRedirectURI(s.base(r))+"."))
		return
	}
	if ar != nil && ar.GetRedirectURI() != nil {
		w.redirect = ar.GetRedirectURI().String()
	}
	if err == nil {
		err = resErr
	}
	if err == nil {
		err = checkPKCE(r.Form)
	}
	if err != nil {
		if ar == nil || !ar.IsRedirectURIValid() {
			// Nothing can be sent back to the client (RFC 6749 §4.1.2.1): the person reads
			// why in the browser, the operator in the log.
			s.refusalPage(w, r, err)
			return
		}
		s.logError(r, err)
		s.provider.WriteAuthorizeError(ctx, w, ar, err)
		return
	}
	person, ok := s.o.Sessions.Person(r)
	if !ok {
		http.Redirect(w, r, s.o.Sessions.SignInURL(AuthorizePath+"?"+authorizeQuery(r.Form)), http.StatusFound)
		return
	}
	ms, err := s.o.Members.Memberships(ctx, person.ID)
	if err != nil {
		s.serverError(w, r, err)
		return
	}
	ms = slices.DeleteFunc(slices.Clone(ms), func(m Membership) bool {
		return m.Role != auth.RoleMember && m.Role != auth.RoleAdmin
	})
	if len(ms) == 0 {
		s.page(w, http.StatusForbidden, pageData{Title: "No workspace", Person: person,
			Message: "You are signed in, but you are not a member of any workspace of this gateway. Ask a workspace admin to add you, then connect again."})
		return
	}
	scopes := ar.GetRequestedScopes()
	if len(scopes) == 0 {
		scopes = fosite.Arguments{Scope}
	}
	c, _ := ar.GetClient().(*client)
	if hint != "" && !c.firstParty {
		// The URL the client was given names a workspace: the grant is for that one, the
		// only one that URL serves (docs/AUTH.md "The resource is the URL you were given").
		i := slices.IndexFunc(ms, func(m Membership) bool { return m.WorkspaceID == hint })
		if i < 0 {
			s.page(w, http.StatusForbidden, pageData{Title: "Not a member of this workspace", Person: person,
				Message: "The MCP URL this client was given is for workspace " + hint + ", and you are not a member of it. Ask one of its admins to add you, or give the client the URL of a workspace you belong to (Console → Client setup)."})
			return
		}
		ms = ms[i : i+1]
	}
	ws := chooseWorkspace(ms, r.PostForm.Get("workspace"), hint)
	if r.Method == http.MethodPost {
		if o := r.Header.Get("Origin"); o != "" && o != s.base(r) {
			http.Error(w, "cross-origin consent refused", http.StatusForbidden)
			return
		}
		if r.PostForm.Get("decision") != "allow" {
			s.provider.WriteAuthorizeError(ctx, w, ar, fosite.ErrAccessDenied.WithHint("The person denied the request."))
			return
		}
		if ws == "" {
			http.Error(w, "choose a workspace you are a member of", http.StatusBadRequest)
			return
		}
		if !c.firstParty { // the console asks no consent (console.go): nothing to remember
			if err := db.ASConsentPut(ctx, s.o.Pool, person.ID, c.GetID(), ws, scopes); err != nil {
				s.serverError(w, r, err)
				return
			}
		}
	} else if c.firstParty {
		// The console: no consent; only a person in several workspaces (and no hint) is
		// asked which one.
		if ws == "" {
			s.consentPage(ctx, w, r, person, c, ms, ws, scopes)
			return
		}
	} else {
		consented := false
		if ws != "" {
			if consented, err = db.ASConsentGet(ctx, s.o.Pool, person.ID, c.GetID(), ws, scopes); err != nil {
				s.serverError(w, r, err)
				return
			}
		}
		if !consented {
			s.consentPage(ctx, w, r, person, c, ms, ws, scopes)
			return
		}
	}
	role := ""
	for _, m := range ms {
		if m.WorkspaceID == ws {
			role = m.Role
		}
	}
	sess := newSession()
	sess.JWTClaims.Subject = person.ID
	sess.JWTClaims.Extra = map[string]any{"role": role, "workspaces": []string{ws}, "sid": ar.GetID(),
		"client_id": c.GetID()}
	sess.Subject = person.ID
	for _, sc := range scopes {
		ar.GrantScope(sc)
	}
	for _, a := range ar.GetRequestedAudience() {
		ar.GrantAudience(a)
	}
	resp, err := s.provider.NewAuthorizeResponse(ctx, ar, sess)
	if err != nil {
		s.logError(r, err)
		s.provider.WriteAuthorizeError(ctx, w, ar, err)
		return
	}
	s.provider.WriteAuthorizeResponse(ctx, w, ar, resp)
}

// checkPKCE requires code_challenge with code_challenge_method S256 before the person
// sees the consent page (fosite checks it again when the code is issued).
func checkPKCE(f url.Values) error {
	switch {
	case f.Get("code_challenge") == "":
		return fosite.ErrInvalidRequest.WithHint("code_challenge is required (PKCE with S256).")
	case f.Get("code_challenge_method") != "S256":
		return fosite.ErrInvalidRequest.WithHint("code_challenge_method must be S256.")
	}
	return nil
}

// chooseWorkspace is the workspace of the grant: the one chosen on the consent form, else
// the one the resource named, else the only one; "" when the person must choose. A
// workspace the person is not a member of is never chosen.
func chooseWorkspace(ms []Membership, chosen, hint string) string {
	member := func(ws string) bool {
		return ws != "" && slices.ContainsFunc(ms, func(m Membership) bool { return m.WorkspaceID == ws })
	}
	switch {
	case chosen != "":
		if member(chosen) {
			return chosen
		}
		return ""
	case member(hint):
		return hint
	case len(ms) == 1:
		return ms[0].WorkspaceID
	}
	return ""
}

// authorizeQuery is the authorization request's parameters again (for the way back from
// sign-in), without the consent form's own fields.
func authorizeQuery(f url.Values) string {
	q := url.Values{}
	for k, v := range f {
		switch k {
		case "decision", "workspace", "audience":
			continue
		}
		q[k] = v
	}
	return q.Encode()
}

type pageData struct {
	Title      string
	Message    string
	Person     Person
	Client     string
	ClientID   string
	LogoURI    string
	Redirect   string
	Document   bool
	Scopes     []string
	Workspaces []workspaceOption
	Hidden     []hiddenField
	Action     string
	// FirstParty: the console's workspace chooser, not a consent.
	FirstParty bool
	// FormTarget is the CSP source of the client's redirect URI (its origin, or its
	// custom scheme), "" when the page has no consent form.
	FormTarget string
}

type workspaceOption struct {
	ID, Name, Role string
	Selected       bool
}

type hiddenField struct{ Name, Value string }

func (s *Server) consentPage(ctx context.Context, w http.ResponseWriter, r *http.Request, p Person, c *client,
	ms []Membership, ws string, scopes []string) {
	d := pageData{Title: "Allow access", Person: p, Client: c.Name, ClientID: c.GetID(), LogoURI: c.LogoURI,
		Document: c.Document, Scopes: scopes, Action: AuthorizePath, FirstParty: c.firstParty}
	if c.firstParty {
		d.Title = "Choose a workspace"
	}
	if d.Client == "" {
		d.Client = "An unnamed client"
	}
	if u, err := url.Parse(r.Form.Get("redirect_uri")); err == nil {
		d.Redirect = u.Scheme + "://" + u.Host
		d.FormTarget = cspSource(u)
	}
	for _, m := range ms {
		name := m.WorkspaceID
		if w, err := db.WorkspaceGet(ctx, s.o.Pool, m.WorkspaceID); err == nil && w.Name != "" {
			name = w.Name
		}
		d.Workspaces = append(d.Workspaces, workspaceOption{ID: m.WorkspaceID, Name: name, Role: m.Role,
			Selected: m.WorkspaceID == ws})
	}
	for k, vs := range r.Form {
		switch k {
		case "decision", "workspace", "audience":
			continue
		}
		for _, v := range vs {
			d.Hidden = append(d.Hidden, hiddenField{k, v})
		}
	}
	slices.SortFunc(d.Hidden, func(a, b hiddenField) int { return strings.Compare(a.Name, b.Name) })
	s.page(w, http.StatusOK, d)
}

func (s *Server) page(w http.ResponseWriter, status int, d pageData) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	// form-action also governs the redirects that follow the form's submission (CSP 3
	// §6.4.1; Chromium enforces it): the decision answers 303 to the client's redirect URI,
	// so that URI's origin (or custom scheme) is allowed beside 'self'.
	formAction := "'self'"
	if d.FormTarget != "" {
		formAction += " " + d.FormTarget
	}
	h.Set("Content-Security-Policy", "default-src 'none'; img-src https:; style-src 'unsafe-inline'; form-action "+formAction+"; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	// same-origin, not no-referrer: under no-referrer a browser sends "Origin: null" with
	// the form's POST (Fetch §3.2.5), which the decision's cross-origin check must refuse.
	// Nothing leaves for another origin either way.
	h.Set("Referrer-Policy", "same-origin")
	w.WriteHeader(status)
	_ = pageTmpl.Execute(w, d)
}

// cspSource is u as a CSP source expression (CSP 3 §2.3.1): "scheme://host[:port]" for
// http and https, "scheme:" for a custom scheme (cursor:, vscode:). It returns "" for
// anything with a character a source expression cannot hold, so that a redirect URI can
// never add a directive to the policy. The URI was already matched against the client's
// registered redirect URIs (RFC 6749 §3.1.2.3) before the page is shown.
func cspSource(u *url.URL) string {
	ok := func(s, extra string) bool {
		return s != "" && strings.IndexFunc(s, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(extra, r))
		}) < 0
	}
	if !ok(u.Scheme, "+-.") {
		return ""
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		if !ok(u.Host, ".-:[]") {
			return ""
		}
		return strings.ToLower(u.Scheme) + "://" + u.Host
	}
	return strings.ToLower(u.Scheme) + ":"
}

var pageTmpl = template.Must(template.New("consent").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>{{.Title}} · Agentpack MCP Gateway</title>
<style>body{font:16px system-ui,sans-serif;max-width:34rem;margin:3rem auto;padding:0 1rem;color:#1b1f24}
.card{border:1px solid #d0d7de;border-radius:8px;padding:1.5rem}img{width:48px;height:48px;float:right}
button{font:inherit;padding:.5rem 1.2rem;margin-right:.5rem;border-radius:6px;border:1px solid #8c959f;cursor:pointer}
button[value=allow]{background:#1f6feb;color:#fff;border-color:#1f6feb}.muted{color:#57606a;font-size:.9rem}
code{font-size:.85rem;word-break:break-all}</style></head>
<body><main class="card">
{{if .FirstParty}}
<h1 id="consent-title">Open the console in which workspace?</h1>
<p>Signed in as <strong>{{if .Person.Email}}{{.Person.Email}}{{else}}{{.Person.Name}}{{end}}</strong>. You are a member of several workspaces; the console works in one at a time (sign in again to switch).</p>
<form method="post" action="{{.Action}}">
{{range .Hidden}}<input type="hidden" name="{{.Name}}" value="{{.Value}}">{{end}}
<p><label>Workspace
<select name="workspace" id="workspace">{{range .Workspaces}}<option value="{{.ID}}"{{if .Selected}} selected{{end}}>{{.Name}} ({{.Role}})</option>{{end}}</select></label></p>
<p><button type="submit" name="decision" value="allow" id="allow">Continue</button></p>
</form>
{{else if .ClientID}}
<h1 id="consent-title">{{if .LogoURI}}<img src="{{.LogoURI}}" alt="">{{end}}Allow <span id="client-name">{{.Client}}</span> to use the gateway as you?</h1>
<p>Signed in as <strong>{{if .Person.Email}}{{.Person.Email}}{{else}}{{.Person.Name}}{{end}}</strong>.</p>
<p><span id="client-name-2">{{.Client}}</span> will be sent back to <strong id="redirect-host">{{.Redirect}}</strong>
and may call this gateway's MCP tools in the workspace below with your role there, until you revoke it
(Console → Connected clients).</p>
<p class="muted">Client id: <code>{{.ClientID}}</code>{{if .Document}} (its metadata document){{end}}</p>
<form method="post" action="{{.Action}}">
{{range .Hidden}}<input type="hidden" name="{{.Name}}" value="{{.Value}}">{{end}}
<p><label>Workspace
<select name="workspace" id="workspace">{{range .Workspaces}}<option value="{{.ID}}"{{if .Selected}} selected{{end}}>{{.Name}} ({{.Role}})</option>{{end}}</select></label></p>
<p>Scopes: {{range .Scopes}}<code>{{.}}</code> (use the MCP endpoint) {{end}}</p>
<p><button type="submit" name="decision" value="allow" id="allow">Allow</button>
<button type="submit" name="decision" value="deny" id="deny">Deny</button></p>
</form>
{{else}}
<h1>{{.Title}}</h1><p id="message">{{.Message}}</p>
{{end}}
</main></body></html>
`))

// jwtSigner is fosite's jwt.Signer over a signing.Key: access tokens are RS256 JWTs with
// typ at+jwt (RFC 9068), signed by KMS or the local key file. Only Generate and
// GetSignature are used (no introspection is composed); the gateway verifies with
// shared/auth.
type jwtSigner struct{ key *signing.Key }

var errNotComposed = errors.New("authserver: token introspection is not offered")

func (j *jwtSigner) Generate(ctx context.Context, claims jwt.MapClaims, _ jwt.Mapper) (string, string, error) {
	b, err := jsonMarshal(claims)
	if err != nil {
		return "", "", err
	}
	tok, err := j.key.SignJWT(ctx, "at+jwt", b)
	if err != nil {
		return "", "", err
	}
	return tok, tok[strings.LastIndexByte(tok, '.')+1:], nil
}

func (j *jwtSigner) Validate(context.Context, string) (string, error)   { return "", errNotComposed }
func (j *jwtSigner) Decode(context.Context, string) (*jwt.Token, error) { return nil, errNotComposed }
func (j *jwtSigner) Hash(_ context.Context, in []byte) ([]byte, error) {
	sum := sha256Sum(in)
	return sum[:], nil
}
func (j *jwtSigner) GetSignature(_ context.Context, token string) (string, error) {
	i := strings.LastIndexByte(token, '.')
	if i < 0 {
		return "", errors.New("authserver: not a JWT")
	}
	return token[i+1:], nil
}
func (j *jwtSigner) GetSigningMethodLength(context.Context) int { return 32 }

// issWriter adds the authorization server's issuer as the iss parameter to every
// authorization response sent to the client's redirect URI, success and error alike
// (RFC 9207 §2; advertised as authorization_response_iss_parameter_supported), so that a
// client talking to several authorization servers can tell which one answered (mix-up
// defence). Redirects elsewhere (the sign-in page) are left alone.
type issWriter struct {
	http.ResponseWriter
	iss      string
	redirect string // the validated redirect URI, "" before validation
	// state is the request's state as sent (nil: none), put back in the response in place
	// of padState's stand-in; none sent, none echoed.
	state *string
}

// statePad prefixes the state fosite sees (padState).
const statePad = "agentpack-state:"

// padState gives fosite a state it accepts and returns the function that puts the request's
// own back. state is optional and never judged by its length here: OAuth 2.1 §7.12 lets PKCE
// (required) carry the CSRF protection, and Cursor, the Inspector's web UI and the TypeScript
// SDK's providers without state() send none or a short one (docs/AUTH.md "Clients"). fosite
// refuses a state under 8 characters and no setting lifts that (Fosite.GetMinParameterEntropy
// never goes below its default), so fosite parses a stand-in, statePad + the state, and the
// issWriter answers with the state as sent. r.Form holds the client's own state again once
// restore runs (the sign-in's return path and the consent form carry it as sent).
func padState(r *http.Request) (restore func()) {
	forms := []url.Values{r.Form}
	if r.PostForm != nil {
		forms = append(forms, r.PostForm)
	}
	saved := make([][]string, len(forms))
	for i, f := range forms {
		saved[i] = f["state"]
		f["state"] = []string{statePad + f.Get("state")}
	}
	return func() {
		for i, f := range forms {
			if saved[i] == nil {
				delete(f, "state")
			} else {
				f["state"] = saved[i]
			}
		}
	}
}

func (w *issWriter) WriteHeader(code int) {
	if loc := w.Header().Get("Location"); code >= 300 && code < 400 && w.redirect != "" && strings.HasPrefix(loc, w.redirect) {
		if u, err := url.Parse(loc); err == nil {
			q := u.Query()
			q.Set("iss", w.iss)
			if w.state == nil {
				q.Del("state")
			} else {
				q.Set("state", *w.state)
			}
			u.RawQuery = q.Encode()
			w.Header().Set("Location", u.String())
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

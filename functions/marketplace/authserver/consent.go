package authserver

import (
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/agentpack/gateway/shared/auth"
	"github.com/agentpack/gateway/shared/db"
	"github.com/ory/fosite"
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
